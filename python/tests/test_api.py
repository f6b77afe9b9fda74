"""The API against real tables: results, progress, and exceptions by exit
code."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest
from conftest import generate, write_geoparquet

import geocompact
from geocompact import CommandError, CommitConflict, ProgressEvent, UsageError, ValidationError


def test_rewrite_dry_run_then_hilbert(warehouse: Path, demo: str, capfd: pytest.CaptureFixture[str]) -> None:
    dry = geocompact.rewrite(demo, curve="hilbert", dry_run=True, warehouse=warehouse,
                             options={"min-input-files": 2, "target-file-size-bytes": "4MiB"})
    assert dry.dry_run and dry.snapshots_committed == 0
    assert dry.files_before == 12 and dry.plan is not None

    events: list[ProgressEvent] = []
    res = geocompact.rewrite(demo, curve="hilbert", warehouse=warehouse, progress=events.append,
                             options={"min-input-files": 2, "target-file-size-bytes": "4MiB"})
    assert isinstance(res, geocompact.RewriteResult)
    assert res.rewritten_data_files_count == 12
    assert 0 < res.added_data_files_count < 12
    assert res.verified and res.snapshots_committed == 1
    assert res.files_after == res.added_data_files_count
    assert "hilbert" in res.sort_order
    assert res.raw["rewritten_data_files_count"] == 12
    # Progress reached the callback, and nothing reached this process's stdout.
    assert events and all(e.msg for e in events)
    assert capfd.readouterr().out == ""

    again = geocompact.rewrite(demo, curve="hilbert", warehouse=warehouse, options={"min-input-files": 2})
    assert again.rewritten_data_files_count == 0 and again.noop_reason


def test_progress_goes_to_logger(warehouse: Path, demo: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="geocompact"):
        geocompact.rewrite(demo, warehouse=warehouse, options={"min-input-files": 2})
    assert any(r.name == "geocompact" for r in caplog.records)


def test_usage_error(warehouse: Path, demo: str) -> None:
    with pytest.raises(UsageError) as e:
        geocompact.rewrite(demo, curve="hilbret", warehouse=warehouse)
    assert e.value.exit_code == 2 and not e.value.retryable
    assert "hilbret" in e.value.message and "hilbert" in e.value.message
    with pytest.raises(UsageError, match="min-input-file"):
        geocompact.rewrite(demo, options={"min-input-file": 2}, warehouse=warehouse)


def test_command_error_names_missing_table(warehouse: Path, demo: str) -> None:
    with pytest.raises(CommandError) as e:
        geocompact.metrics("demo.pingz", warehouse=warehouse)
    assert e.value.exit_code == 1
    assert "demo.pingz" in str(e.value) and "demo.pings" in str(e.value)


def test_ingest_validate_and_violations(warehouse: Path, tmp_path: Path) -> None:
    good = write_geoparquet(tmp_path / "good.parquet", 500)
    res = geocompact.ingest("gis.points", [good], create=True, add_bbox=True, warehouse=warehouse)
    assert res.created and res.rows == 500 and res.files == 1 and res.snapshot_id
    assert geocompact.validate("gis.points", warehouse=warehouse).ok

    bad = write_geoparquet(tmp_path / "bad.parquet", 100, bad_rows=3)
    with pytest.raises(ValidationError) as e:
        geocompact.validate(files=[bad])
    err = e.value
    assert err.exit_code == 3 and err.report is not None and not err.report.ok
    assert [v.input for v in err.violations] == [str(bad)]
    assert err.violations[0].counts["wkb.truncated"] == 3
    assert "bad.parquet" in str(err)

    with pytest.raises(ValidationError) as e2:
        geocompact.ingest("gis.points", [bad], warehouse=warehouse)
    assert e2.value.violations and e2.value.violations[0].counts["wkb.truncated"] == 3
    assert geocompact.metrics("gis.points", warehouse=warehouse).total_records == 500


def test_maintenance_calls(warehouse: Path, demo: str) -> None:
    m = geocompact.metrics(demo, warehouse=warehouse)
    assert m.file_count == 12 and m.total_records == 20000 and m.snapshot_count == 12
    assert m.row_groups is not None and m.row_groups["count"] >= m.file_count
    assert geocompact.metrics(demo, row_groups=False, warehouse=warehouse).row_groups is None

    b = geocompact.bench(demo, layouts=["current", "hilbert"], warehouse=warehouse)
    assert [layout["layout"] for layout in b.layouts] == ["current", "hilbert"]
    assert b.rows == 20000

    geocompact.rewrite(demo, curve="hilbert", warehouse=warehouse, options={"min-input-files": 2})
    ex = geocompact.expire(demo, older_than="0s", retain_last=1, force=True, warehouse=warehouse)
    assert ex.retained_snapshots == 1 and len(ex.expired_snapshots) == 12
    assert ex.deleted_data_files_count == 12
    assert ex.kept_files_count == 0 and ex.kept_files == []
    again = geocompact.expire(demo, older_than="0s", retain_last=1, force=True, dry_run=True,
                              delete_outside_location=True, warehouse=warehouse)
    assert again.dry_run and again.expired_snapshots == [] and again.kept_files_count == 0

    orph = geocompact.orphans(demo, older_than="0s", force=True, dry_run=True, warehouse=warehouse)
    assert orph.dry_run and orph.files == []

    rep = geocompact.maintain(demo, dry_run=True, warehouse=warehouse)
    assert rep.dry_run and rep.steps and rep.before is not None
    assert rep.before.file_count == geocompact.metrics(demo, warehouse=warehouse).file_count


def test_rewrite_position_delete_files(warehouse: Path, demo: str) -> None:
    before = geocompact.metrics(demo, warehouse=warehouse).snapshot_count
    r = geocompact.rewrite_position_delete_files(demo, options={"rewrite-all": True}, warehouse=warehouse)
    assert isinstance(r, geocompact.RewriteDeletesResult)
    assert r.noop_reason == "the table has no position delete files"
    assert r.rewritten_delete_files_count == 0 and r.snapshot_ids == []
    dry = geocompact.rewrite_position_delete_files(demo, dry_run=True, where="id < 10", warehouse=warehouse)
    assert dry.dry_run and dry.raw["table"] == demo
    with pytest.raises(UsageError, match='unknown option "min-input-file"'):
        geocompact.rewrite_position_delete_files(demo, options={"min-input-file": 2}, warehouse=warehouse)
    with pytest.raises(CommandError, match="no_such_column"):
        geocompact.rewrite_position_delete_files(demo, where="no_such_column = 1", warehouse=warehouse)
    assert geocompact.metrics(demo, warehouse=warehouse).snapshot_count == before


def test_lease_held_is_a_retryable_conflict(warehouse: Path, demo: str) -> None:
    import time

    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("geocompact", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    tbl = cat.load_table(demo)
    snap = tbl.current_snapshot()
    assert snap is not None
    tbl.manage_snapshots().create_tag(snap.snapshot_id, "geocompact-maintain-lease").commit()
    expires = int((time.time() + 3600) * 1000)
    with tbl.transaction() as tx:
        tx.set_properties({"geocompact.maintain.lease-owner": "other-host:42",
                           "geocompact.maintain.lease-expires-ms": str(expires)})
    with pytest.raises(CommitConflict) as e:
        geocompact.maintain(demo, warehouse=warehouse)
    assert e.value.exit_code == 4 and e.value.retryable
    assert "other-host:42" in str(e.value)


def test_delta_optimize_and_vacuum(tmp_path: Path, warehouse: Path) -> None:
    loc = tmp_path / "lake" / "pings"
    for i in range(6):
        f = write_geoparquet(tmp_path / f"day{i}.parquet", 300, offset=i)
        geocompact.ingest(None, [f], delta=loc, create=(i == 0), add_bbox=True)
    res = geocompact.optimize(loc, curve="hilbert", options={"min-input-files": 2})
    assert res.rewritten_data_files_count == 6 and res.verified
    assert res.format == "delta"
    assert geocompact.metrics(delta=loc).total_records == 1800
    vac = geocompact.vacuum(loc, dry_run=True)
    assert vac.dry_run and vac.deleted_files_count == 0
    with pytest.raises(UsageError, match="retention|floor|retain"):
        geocompact.vacuum(loc, retain="1h")


def golden(name: str) -> Path:
    """A Delta golden table (GEOCOMPACT_DELTA_GOLDEN, else ../shared beside
    the repository, as the Go tests find them)."""
    root = Path(os.environ.get("GEOCOMPACT_DELTA_GOLDEN") or Path(__file__).parents[3] / "shared" / "delta-golden")
    path = root / name
    assert path.is_dir(), f"Delta golden table {path} not found: set GEOCOMPACT_DELTA_GOLDEN"
    return path


def test_delta_purge_deletion_vectors(tmp_path: Path, warehouse: Path) -> None:
    loc = tmp_path / "dv"
    shutil.copytree(golden("dv-partitioned-with-checkpoint"), loc)
    m = geocompact.metrics(delta=loc)
    before = m.total_records
    assert m.deletes is not None and m.deletes["deletion_vectors"] == 2 and m.deletes["deleted_records"] == 2
    res = geocompact.optimize(loc, purge_deletion_vectors=True)
    assert res.verified and res.rewritten_data_files_count == 2 and res.raw["removed_delete_files_count"] == 2
    # metrics counts the rows in the files: the two vectors' rows are gone,
    # and so is the debt it reported.
    assert geocompact.metrics(delta=loc).total_records == before - 2
    assert geocompact.metrics(delta=loc).deletes is None
    again = geocompact.rewrite(delta=loc, purge_deletion_vectors=True)
    assert again.rewritten_data_files_count == 0
    with pytest.raises(UsageError, match="applies to a Delta table"):
        geocompact.rewrite("gis.t", purge_deletion_vectors=True, warehouse=warehouse)


def test_table_and_delta_are_exclusive() -> None:
    with pytest.raises(ValueError):
        geocompact.rewrite("a.b", delta="/x")
    with pytest.raises(ValueError):
        geocompact.metrics()


def test_generate_fixture_is_fragmented(warehouse: Path) -> None:
    generate(warehouse, "demo.small", rows=1000, commits=3)
    assert geocompact.metrics("demo.small", warehouse=warehouse).file_count == 3
