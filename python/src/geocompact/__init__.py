"""geocompact: compaction, clustering and maintenance of spatial Apache
Iceberg and Delta Lake tables, from Python.

The functions run the ``geocompact`` binary this package installs (a Go
program) with ``--json`` and return its results as dataclasses; see
:mod:`geocompact.api` for the arguments they share and docs/python.md for
examples.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from ._binary import find_binary
from ._run import CatalogLike, ProgressEvent
from .api import (
    bench,
    expire,
    ingest,
    maintain,
    metrics,
    optimize,
    orphans,
    rewrite,
    rewrite_position_delete_files,
    vacuum,
    validate,
)
from .errors import (
    BinaryNotFound,
    CommandError,
    CommitConflict,
    GeocompactError,
    GeocompactTimeout,
    UsageError,
    ValidationError,
)
from .results import (
    BenchResult,
    ExpireResult,
    IngestResult,
    MaintainResult,
    MaintainStep,
    OrphansResult,
    RewriteDeletesResult,
    RewriteResult,
    TableMetrics,
    VacuumResult,
    ValidateInput,
    ValidateResult,
)

try:
    __version__ = _version("geocompact")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "BenchResult",
    "BinaryNotFound",
    "CatalogLike",
    "CommandError",
    "CommitConflict",
    "ExpireResult",
    "GeocompactError",
    "GeocompactTimeout",
    "IngestResult",
    "MaintainResult",
    "MaintainStep",
    "OrphansResult",
    "ProgressEvent",
    "RewriteDeletesResult",
    "RewriteResult",
    "TableMetrics",
    "UsageError",
    "VacuumResult",
    "ValidateInput",
    "ValidateResult",
    "ValidationError",
    "__version__",
    "bench",
    "expire",
    "find_binary",
    "ingest",
    "maintain",
    "metrics",
    "optimize",
    "orphans",
    "rewrite",
    "rewrite_position_delete_files",
    "vacuum",
    "validate",
]
