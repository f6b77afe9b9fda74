"""Result types: one dataclass per command, with the fields of its JSON
output under the same names (Iceberg's, such as
``rewritten_data_files_count``).

Each is built from the command's ``--json`` document; ``raw`` keeps the
whole document, so a field this version does not name yet is still there.
Nested records the API does not model (a rewrite's plan, a bench layout's
windows) stay plain dicts and lists.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

_NESTED: dict[tuple[str, str], Any] = {}


def from_json(cls: type[T], doc: Any) -> T:
    """Builds the dataclass ``cls`` from a JSON object: each field takes the
    key of its name (nested result types are built too), missing keys keep
    the field's default, and ``raw`` gets the whole object."""
    if not isinstance(doc, dict):
        raise TypeError(f"{cls.__name__}: want a JSON object, got {type(doc).__name__}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name == "raw":
            kwargs["raw"] = doc
            continue
        if f.name not in doc or doc[f.name] is None:
            continue
        value = doc[f.name]
        nested = _NESTED.get((cls.__name__, f.name))
        if nested is not None:
            kind, sub = nested
            value = [from_json(sub, v) for v in value] if kind == "list" else from_json(sub, value)
        kwargs[f.name] = value
    return cls(**kwargs)


@dataclass(frozen=True)
class RewriteResult:
    """What ``rewrite`` (and ``optimize`` on a Delta table) did: Iceberg's
    five ``rewrite_data_files`` counters, files and bytes before and after,
    the layout used, and why nothing was rewritten when nothing was."""

    rewritten_data_files_count: int = 0
    added_data_files_count: int = 0
    rewritten_bytes_count: int = 0
    failed_data_files_count: int = 0
    removed_delete_files_count: int = 0
    files_before: int = 0
    files_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    added_bytes_count: int = 0
    snapshots_committed: int = 0
    snapshot_ids: list[int] = field(default_factory=list)
    strategy: str = ""
    sort_order: str = ""
    layout_source: str = ""
    auto: list[dict[str, Any]] = field(default_factory=list)
    dry_run: bool = False
    noop_reason: str = ""
    verified: bool = False
    plan: dict[str, Any] | None = None
    duration_ns: int = 0
    format: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class RewriteDeletesResult:
    """What ``rewrite_position_delete_files`` did: Iceberg's four
    counters, the positions kept and dropped (their data file gone, or a
    deletion vector holding its deletes), whether the new files are
    deletion vectors (a v3 table), and why nothing was rewritten when
    nothing was."""

    table: str = ""
    rewritten_delete_files_count: int = 0
    added_delete_files_count: int = 0
    rewritten_bytes_count: int = 0
    added_bytes_count: int = 0
    groups: int = 0
    deletes_kept: int = 0
    dangling_deletes_dropped: int = 0
    equality_delete_files_converted: int = 0
    deletion_vectors: bool = False
    snapshot_ids: list[int] = field(default_factory=list)
    snapshot_id: int = 0
    dry_run: bool = False
    noop_reason: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class IngestResult:
    """What ``ingest`` committed: the table, whether it was created, the
    snapshot, files and rows added, and the files skipped (already
    ingested)."""

    table: str = ""
    created: bool = False
    snapshot_id: int = 0
    files: int = 0
    rows: int = 0
    added_columns: list[str] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class ValidateInput:
    """One validated input (a file, or a table with its files)."""

    input: str = ""
    ok: bool = True
    violations: int = 0
    snapshot_id: int = 0
    report: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None
    files: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def counts(self) -> dict[str, int]:
        """Violations and warnings by code (``report.counts``)."""
        counts = self.report.get("counts") or {}
        return {str(k): int(v) for k, v in counts.items()}

    @property
    def examples(self) -> list[dict[str, Any]]:
        """Example findings: row, code and detail (``report.examples``)."""
        return list(self.report.get("examples") or [])


@dataclass(frozen=True)
class ValidateResult:
    """The ``validate`` report: ``ok`` when no input has a violation."""

    ok: bool = True
    inputs: list[ValidateInput] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class ExpireResult:
    """What ``expire`` removed (or, dry, would remove), by Iceberg's
    ``expire_snapshots`` counters."""

    table: str = ""
    older_than_ns: int = 0
    cutoff: str = ""
    retain_last: int = 0
    dry_run: bool = False
    expired_snapshots: list[dict[str, Any]] = field(default_factory=list)
    retained_snapshots: int = 0
    removed_refs: list[str] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    deleted_data_files_count: int = 0
    deleted_position_delete_files_count: int = 0
    deleted_equality_delete_files_count: int = 0
    deleted_manifest_files_count: int = 0
    deleted_manifest_lists_count: int = 0
    deleted_statistics_files_count: int = 0
    freed_bytes: int = 0
    kept_files: list[dict[str, Any]] = field(default_factory=list)
    kept_files_count: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class OrphansResult:
    """The orphan files ``orphans`` removed (or, dry, would remove)."""

    table: str = ""
    location: str = ""
    older_than_ns: int = 0
    cutoff: str = ""
    dry_run: bool = False
    files: list[dict[str, Any]] = field(default_factory=list)
    bytes: int = 0
    kept_files: list[dict[str, Any]] = field(default_factory=list)
    kept_files_count: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class VacuumResult:
    """What ``vacuum`` deleted from a Delta table (or, dry, would)."""

    location: str = ""
    version: int = 0
    retain_ms: int = 0
    cutoff: str = ""
    dry_run: bool = False
    files: list[dict[str, Any]] = field(default_factory=list)
    deleted_files_count: int = 0
    bytes: int = 0
    temp_files_count: int = 0
    kept_files: list[dict[str, Any]] = field(default_factory=list)
    kept_files_count: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class TableMetrics:
    """A table's health: files, sizes, snapshots (Delta: versions),
    manifests, delete debt (``deletes``: delete files and deletion vectors
    by kind, their bytes and the fraction of rows deleted; None without
    deletes), row-group tightness (``row_groups``: count, mean bbox area
    against the file's, files without bbox statistics, row groups read per
    window; None when no footer was read) and, per partition, layout
    health (with its ``row_groups``) and delete debt."""

    file_count: int = 0
    avg_file_bytes: int = 0
    total_bytes: int = 0
    total_records: int = 0
    snapshot_count: int = 0
    oldest_snapshot_age_seconds: float = 0.0
    current_snapshot_age_seconds: float = 0.0
    manifest_count: int = 0
    delete_file_count: int = 0
    deletes: dict[str, Any] | None = None
    row_groups: dict[str, Any] | None = None
    partitions: list[dict[str, Any]] = field(default_factory=list)
    format: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class MaintainStep:
    """One step of a ``maintain`` run: its name, status and detail."""

    step: str = ""
    status: str = ""
    detail: str = ""
    duration_ns: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class MaintainResult:
    """A ``maintain`` run: its steps, the gate's decision, each step's own
    result and the table's metrics before and after."""

    table: str = ""
    format: str = ""
    dry_run: bool = False
    lease: dict[str, Any] | None = None
    steps: list[MaintainStep] = field(default_factory=list)
    before: TableMetrics | None = None
    gate: dict[str, Any] = field(default_factory=dict)
    rewrite: RewriteResult | None = None
    manifests: dict[str, Any] | None = None
    expire: ExpireResult | None = None
    orphans: OrphansResult | None = None
    vacuum: VacuumResult | None = None
    after: TableMetrics | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class BenchResult:
    """Files planned per bbox window for each layout of the same rows."""

    table: str = ""
    rows: int = 0
    source_files: int = 0
    source_bytes: int = 0
    extent: dict[str, float] = field(default_factory=dict)
    filter: str = ""
    target_file_size_bytes: int = 0
    windows: int = 0
    window_area: float = 0.0
    window_placement: str = ""
    seed: int = 0
    options: dict[str, str] = field(default_factory=dict)
    arrival_order: Any = None
    layouts: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


_NESTED.update(
    {
        ("ValidateResult", "inputs"): ("list", ValidateInput),
        ("MaintainResult", "steps"): ("list", MaintainStep),
        ("MaintainResult", "before"): ("one", TableMetrics),
        ("MaintainResult", "after"): ("one", TableMetrics),
        ("MaintainResult", "rewrite"): ("one", RewriteResult),
        ("MaintainResult", "expire"): ("one", ExpireResult),
        ("MaintainResult", "orphans"): ("one", OrphansResult),
        ("MaintainResult", "vacuum"): ("one", VacuumResult),
    }
)
