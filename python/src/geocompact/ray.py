"""Rewriting a table on Ray: the driver plans, Ray tasks run the units of
work, the driver commits.

:func:`rewrite` takes the arguments of :func:`geocompact.rewrite` and
returns the same :class:`~geocompact.RewriteResult`, as
:func:`geocompact.spark.rewrite` does: ``geocompact job plan`` on the
driver, one Ray task per unit (a file group, rewritten whole by
``geocompact job work`` in a subprocess of the Ray worker), ``geocompact
job commit`` of the successful attempts' results on the driver, and
``geocompact job abort`` on any failure. A task Ray retries (its worker or
node died, or ``job work`` failed) writes fresh files, and the commit
deletes those of the attempts whose results it did not keep.

It runs on the Ray cluster the process is connected to (``ray.init()``
first, or Ray starts a local one). Workers need the geocompact binary (the
wheel installed on them, or ``ship_binary=True`` to ship the driver's
through Ray's object store), read access to the catalog and read/write
access to the table's storage. The Go worker's memory counts against the
node, not Ray's object store: ``memory=`` reserves it per task (see
docs/scale-out.md).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
from collections.abc import Callable
from typing import Any

from ._binary import find_binary
from ._jobs import JobRewrite, RunUnits, Work, annotate, batches, run_job
from .results import RewriteResult

#: Called on the driver after every unit's result is in, before the
#: commit (tests stop the driver or change the table there).
_before_commit: Callable[[], None] | None = None

#: A rewrite run on Ray: its result and what every unit's successful
#: attempt reported (``job``, ``group``, ``rows``, ``files_out``,
#: ``start``, ``end``, ``pid``, ``host`` and ``peak_rss_bytes`` (Linux) of
#: the geocompact process, ``executor``: the pid of the Ray worker that ran
#: the task, and ``node``: its Ray node id).
RayRewrite = JobRewrite


def rewrite(table: str, **kwargs: Any) -> RewriteResult:
    """Compacts ``table`` on the connected Ray cluster with the keyword
    arguments of :func:`geocompact.rewrite` (``curve``, ``strategy``,
    ``sort_order``, ``where``, ``options``, ``windows``,
    ``allow_layout_change``, ``dry_run``, ``catalog``, ``catalog_name``,
    ``warehouse``, ``config``, ``logger``, ``env``, ``timeout``) plus
    ``ship_binary``, ``num_cpus`` (a task's CPUs, and the Go worker's
    ``GOMAXPROCS``; 1), ``memory`` (bytes Ray reserves per task; none) and
    ``max_retries`` (3). Raises :class:`~geocompact.CommitConflict` when
    another writer changed the planned files (plan again), and the error
    of the failing step otherwise; a failed rewrite commits nothing and
    leaves none of its files.

    >>> geocompact.ray.rewrite("gis.pings", curve="hilbert").added_data_files_count
    12
    """
    return run(table, **kwargs).result


def run(
    table: str,
    *,
    num_cpus: float = 1,
    memory: int | None = None,
    max_retries: int = 3,
    progress: Any = None,
    **kwargs: Any,
) -> JobRewrite:
    """Does what :func:`rewrite` does and also returns every unit's report."""
    del progress  # the workers' logs stay on the workers
    if num_cpus <= 0 or max_retries < 0 or (memory is not None and memory <= 0):
        raise ValueError(f"num_cpus {num_cpus}, memory {memory}, max_retries {max_retries}: "
                         "want num_cpus > 0, memory > 0 or None, max_retries >= 0")
    return run_job(table, _units(num_cpus, memory, max_retries), before_commit=_before_commit,
                   workers=_slots(num_cpus), **kwargs)


def _slots(num_cpus: float) -> int:
    """How many tasks of num_cpus the cluster runs at once."""
    return max(1, int(_ray().cluster_resources().get("CPU", 1) // num_cpus))


def _units(num_cpus: float, memory: int | None, max_retries: int) -> RunUnits:
    """Runs units as Ray tasks (see batches)."""

    def run_units(units: list[str], work: Work, ship: str | None) -> list[str]:
        ray = _ray()
        blob = None
        if ship is not None:
            with open(ship, "rb") as f:
                blob = ray.put(f.read())
        work = work.with_env({"GOMAXPROCS": str(max(1, int(num_cpus)))})
        opts: dict[str, Any] = {"num_cpus": num_cpus, "max_retries": max_retries, "retry_exceptions": True}
        if memory is not None:
            opts["memory"] = memory
        task = ray.remote(**opts)(_work)
        refs = [task.remote(b, work, blob) for b in batches(units, _slots(num_cpus))]
        return [line for lines in ray.get(refs) for line in lines]

    return run_units


def _work(units: list[str], work: Work, blob: bytes | None) -> list[str]:
    """Runs on a Ray worker: the units, then where the attempt ran."""
    ray = _ray()
    binary = _materialize(blob) if blob is not None else find_binary()
    lines = work.run(units, binary)
    return annotate(lines, {"executor": os.getpid(), "node": ray.get_runtime_context().get_node_id()})


def _ray() -> Any:
    """The ray package (this module shares its name)."""
    return importlib.import_module("ray")


def _materialize(blob: bytes) -> str:
    """Writes the shipped binary once per node (named by its digest) and
    returns its path."""
    path = os.path.join(tempfile.gettempdir(), "geocompact-" + hashlib.sha256(blob).hexdigest()[:16])
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".geocompact-")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    return path


__all__ = ["RayRewrite", "rewrite", "run"]
