"""The geocompact commands as Python functions.

Each function runs the bundled ``geocompact`` binary with ``--json`` and
returns the command's result as a dataclass; nothing is reimplemented here.
Every function takes the same keyword arguments to reach a table:

- ``catalog``: a catalog name (geocompact's config file, else PyIceberg's
  ``~/.pyiceberg.yaml`` and ``PYICEBERG_CATALOG__*`` variables), a PyIceberg
  ``Catalog`` object, or a dict of PyIceberg catalog properties. An object
  or dict is used alone (no config file or PyIceberg configuration of the
  same name is read or merged into it); its properties reach the binary
  through its environment, never its command line.
- ``catalog_name``: the name for a dict of properties (default
  ``"default"``, PyIceberg's).
- ``warehouse``: the embedded SQLite catalog's directory (``--warehouse``).
- ``config``: geocompact's config file (``--config``).
- ``progress``: called with a :class:`ProgressEvent` per log record (a phase
  done, with counts); ``logger`` (default ``logging.getLogger("geocompact")``)
  gets the same records.
- ``env``: extra environment for the binary; ``timeout``: seconds, then
  the command is stopped and :class:`GeocompactTimeout` raised. Any
  exception while waiting (a SIGALRM handler's, ``KeyboardInterrupt``)
  stops the command too before it propagates.

File names are passed after ``--``, so none is read as an option.

Errors raise by the command's exit code: :class:`UsageError` (2),
:class:`ValidationError` (3, with the violations), :class:`CommitConflict`
(4, safe to retry) and :class:`CommandError` (1).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ._run import Catalog, ProgressCallback, run
from .results import (
    BenchResult,
    ExpireResult,
    IngestResult,
    MaintainResult,
    OrphansResult,
    RewriteDeletesResult,
    RewriteResult,
    TableMetrics,
    ValidateResult,
    VacuumResult,
    from_json,
)

PathLike = str | os.PathLike[str]


def _table_flags(table: str | None, delta: PathLike | None) -> list[str]:
    if (table is None) == (delta is None):
        raise ValueError("give exactly one of table (NAMESPACE.TABLE) and delta (a Delta table's location)")
    return ["--table", table] if table is not None else ["--delta", os.fspath(delta)]  # type: ignore[arg-type]


def _options(options: Mapping[str, Any] | None, flag: str = "--option") -> list[str]:
    args: list[str] = []
    for k, v in (options or {}).items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        args += [flag, f"{k}={v}"]
    return args


def rewrite(
    table: str | None = None,
    *,
    delta: PathLike | None = None,
    curve: str | None = None,
    strategy: str | None = None,
    sort_order: str | None = None,
    where: str | None = None,
    options: Mapping[str, Any] | None = None,
    windows: PathLike | None = None,
    allow_layout_change: bool = False,
    dry_run: bool = False,
    purge_deletion_vectors: bool = False,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> RewriteResult:
    """Compacts a table's data files (Iceberg's ``rewrite_data_files``),
    clustered by ``curve`` (linear, zorder, hilbert, str, kd, auto) or
    ``sort_order``; without either the table's recorded layout applies.
    ``options`` take Iceberg's names (``target-file-size-bytes``,
    ``min-input-files``, ...). ``delta`` rewrites a Delta table instead
    (see :func:`optimize`); with ``purge_deletion_vectors`` exactly its
    files that carry a deletion vector (Delta's ``REORG TABLE … APPLY
    (PURGE)``).

    >>> r = geocompact.rewrite("gis.telemetry", curve="hilbert", options={"min-input-files": 2})
    >>> r.rewritten_data_files_count, r.added_data_files_count
    (200, 64)
    """
    args = ["rewrite", *_table_flags(table, delta)]
    for flag, value in (("--curve", curve), ("--strategy", strategy), ("--sort-order", sort_order), ("--where", where)):
        if value is not None:
            args += [flag, value]
    if windows is not None:
        args += ["--windows", os.fspath(windows)]
    args += _options(options)
    if allow_layout_change:
        args.append("--allow-layout-change")
    if dry_run:
        args.append("--dry-run")
    if purge_deletion_vectors:
        args.append("--purge-deletion-vectors")
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout)
    return from_json(RewriteResult, doc)


def rewrite_position_delete_files(
    table: str,
    *,
    where: str | None = None,
    options: Mapping[str, Any] | None = None,
    dry_run: bool = False,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> RewriteDeletesResult:
    """Merges an Iceberg table's small position delete files per partition
    (Iceberg's ``rewrite_position_delete_files``, the ``rewrite-deletes``
    command): positions of data files no longer live are dropped, and on
    a v3 table the files become deletion vectors. Data files are not
    touched. ``options`` take Iceberg's names (``rewrite-all``,
    ``min-input-files``, ``target-file-size-bytes``, ...).

    >>> r = geocompact.rewrite_position_delete_files("gis.telemetry", options={"rewrite-all": True})
    >>> r.rewritten_delete_files_count, r.added_delete_files_count
    (200, 4)
    """
    args = ["rewrite-deletes", "--table", table]
    if where is not None:
        args += ["--where", where]
    args += _options(options)
    if dry_run:
        args.append("--dry-run")
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout)
    return from_json(RewriteDeletesResult, doc)


def optimize(
    location: PathLike,
    *,
    curve: str | None = None,
    strategy: str | None = None,
    sort_order: str | None = None,
    where: str | None = None,
    options: Mapping[str, Any] | None = None,
    allow_layout_change: bool = False,
    dry_run: bool = False,
    purge_deletion_vectors: bool = False,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> RewriteResult:
    """Delta Lake's ``OPTIMIZE`` on the Delta table at ``location`` (a
    directory or ``s3://`` URL): the same engine as :func:`rewrite`,
    committed as remove/add actions that change no data. With
    ``purge_deletion_vectors``, Delta's ``REORG TABLE … APPLY (PURGE)``:
    exactly the files that carry a deletion vector are rewritten.

    >>> geocompact.optimize("/lake/pings", curve="hilbert").files_after
    12
    """
    return rewrite(delta=location, curve=curve, strategy=strategy, sort_order=sort_order, where=where,
                   options=options, allow_layout_change=allow_layout_change, dry_run=dry_run,
                   purge_deletion_vectors=purge_deletion_vectors, progress=progress, logger=logger, env=env,
                   timeout=timeout)


def ingest(
    table: str | None,
    files: Sequence[PathLike],
    *,
    delta: PathLike | None = None,
    create: bool = False,
    add_bbox: bool = False,
    partition_by: str | None = None,
    strict: bool = False,
    recursive: bool = False,
    allow_duplicates: bool = False,
    drop_extra_columns: bool = False,
    add_columns: bool = False,
    extra_args: Sequence[str] = (),
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> IngestResult:
    """Validates GeoParquet files and appends them in one commit; any
    violation refuses the whole batch (:class:`ValidationError`, nothing
    written). Safe to retry: files already ingested are skipped.

    >>> geocompact.ingest("gis.telemetry", ["day1.parquet"], create=True, add_bbox=True).rows
    120000
    """
    args = ["ingest", *_table_flags(table, delta)]
    for flag, on in (("--create", create), ("--add-bbox", add_bbox), ("--strict", strict), ("--recursive", recursive),
                     ("--allow-duplicates", allow_duplicates), ("--drop-extra-columns", drop_extra_columns),
                     ("--add-columns", add_columns)):
        if on:
            args.append(flag)
    if partition_by is not None:
        args += ["--partition-by", partition_by]
    args += list(extra_args)
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout, positional=[os.fspath(f) for f in files])
    return from_json(IngestResult, doc)


def validate(
    table: str | None = None,
    *,
    delta: PathLike | None = None,
    files: Sequence[PathLike] = (),
    strict: bool = False,
    extra_args: Sequence[str] = (),
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> ValidateResult:
    """Checks geometry, CRS, GeoParquet metadata and bbox columns of a table
    or of files. Violations raise :class:`ValidationError` with the report;
    warnings alone return it (``ok`` is True).

    >>> geocompact.validate("gis.telemetry").ok
    True
    """
    args = ["validate"]
    if files:
        if table is not None or delta is not None:
            raise ValueError("validate takes a table, a Delta location or files, not more than one")
    else:
        args += _table_flags(table, delta)
    if strict:
        args.append("--strict")
    args += list(extra_args)
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout, positional=[os.fspath(f) for f in files])
    return from_json(ValidateResult, doc)


def bench(
    table: str | None = None,
    *,
    delta: PathLike | None = None,
    layouts: Sequence[str] | None = None,
    windows: PathLike | None = None,
    options: Mapping[str, Any] | None = None,
    seed: int | None = None,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> BenchResult:
    """Measures files planned per bbox window under each layout
    (``current``, ``unsorted``, ``binpack``, ``hilbert``, ``kd``, ...).

    >>> [l["layout"] for l in geocompact.bench("gis.telemetry", layouts=["current", "hilbert"]).layouts]
    ['current', 'hilbert']
    """
    args = ["bench", *_table_flags(table, delta)]
    if layouts is not None:
        args += ["--layouts", ",".join(layouts)]
    if windows is not None:
        args += ["--windows", os.fspath(windows)]
    if seed is not None:
        args += ["--seed", str(seed)]
    args += _options(options)
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout)
    return from_json(BenchResult, doc)


def expire(
    table: str,
    *,
    older_than: str | None = None,
    retain_last: int | None = None,
    dry_run: bool = False,
    force: bool = False,
    delete_outside_location: bool = False,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> ExpireResult:
    """Expires snapshots ``older_than`` a duration (``"5d"``, ``"12h"``),
    keeping ``retain_last``; below the 1 h floor needs ``force``. Files
    outside the table's location are kept and listed in ``kept_files``
    unless ``delete_outside_location`` is set.

    >>> geocompact.expire("gis.telemetry", older_than="5d", retain_last=10).retained_snapshots
    10
    """
    args = ["expire", "--table", table]
    if older_than is not None:
        args += ["--older-than", older_than]
    if retain_last is not None:
        args += ["--retain-last", str(retain_last)]
    args += _flags(dry_run=dry_run, force=force, delete_outside_location=delete_outside_location)
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout)
    return from_json(ExpireResult, doc)


def orphans(
    table: str,
    *,
    older_than: str | None = None,
    dry_run: bool = False,
    force: bool = False,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> OrphansResult:
    """Removes files under the table's location that no snapshot references
    and that are ``older_than`` a duration (default 3 days).

    >>> len(geocompact.orphans("gis.telemetry", dry_run=True).files)
    0
    """
    args = ["orphans", "--table", table]
    if older_than is not None:
        args += ["--older-than", older_than]
    args += _flags(dry_run=dry_run, force=force)
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout)
    return from_json(OrphansResult, doc)


def maintain(
    table: str | None = None,
    *,
    delta: PathLike | None = None,
    policy: PathLike | None = None,
    dry_run: bool = False,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> MaintainResult:
    """One pass of the maintenance loop under the table's lease: gate,
    rewrite, verify, manifests, expire, orphans (Delta: optimize, vacuum),
    as the ``policy`` file says. Another run holding the lease raises
    :class:`CommitConflict`.

    >>> [s.step for s in geocompact.maintain("gis.telemetry", policy="telemetry.yaml").steps][:2]
    ['gate', 'rewrite']
    """
    args = ["maintain", *_table_flags(table, delta)]
    if policy is not None:
        args += ["--policy", os.fspath(policy)]
    args += _flags(dry_run=dry_run)
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout)
    return from_json(MaintainResult, doc)


def metrics(
    table: str | None = None,
    *,
    delta: PathLike | None = None,
    windows: PathLike | None = None,
    row_groups: bool = True,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: PathLike | None = None,
    config: PathLike | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> TableMetrics:
    """The table's health: file count and sizes, snapshots, manifests, the
    row groups' tightness from the data files' footers, and per partition
    the file-bbox overlap depth, files planned per window and row groups.
    ``row_groups=False`` reads no footer (metadata only).

    >>> geocompact.metrics("gis.telemetry").avg_file_bytes
    864870
    """
    args = ["metrics", *_table_flags(table, delta)]
    if windows is not None:
        args += ["--windows", os.fspath(windows)]
    if not row_groups:
        args.append("--row-groups=false")
    doc = run(args, catalog=catalog, catalog_name=catalog_name, warehouse=_s(warehouse), config=_s(config),
              progress=progress, logger=logger, env=env, timeout=timeout, json_flag=("--format", "json"))
    return from_json(TableMetrics, doc)


def vacuum(
    location: PathLike,
    *,
    retain: str | None = None,
    dry_run: bool = False,
    force: bool = False,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> VacuumResult:
    """Delta Lake's ``VACUUM``: deletes files the Delta table at
    ``location`` no longer references, older than ``retain`` (default the
    table's ``delta.deletedFileRetentionDuration``, the floor unless
    ``force``).

    >>> geocompact.vacuum("/lake/pings", dry_run=True).deleted_files_count
    0
    """
    args = ["vacuum", "--delta", os.fspath(location)]
    if retain is not None:
        args += ["--retain", retain]
    args += _flags(dry_run=dry_run, force=force)
    doc = run(args, progress=progress, logger=logger, env=env, timeout=timeout)
    return from_json(VacuumResult, doc)


def _flags(**flags: bool) -> list[str]:
    return ["--" + name.replace("_", "-") for name, on in flags.items() if on]


def _s(p: PathLike | None) -> str | None:
    return None if p is None else os.fspath(p)
