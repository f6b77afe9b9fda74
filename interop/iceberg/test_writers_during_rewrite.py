"""Other engines write a table while geocompact rewrites it through the
same SQLite catalog.

PyIceberg appends: the rewrite commits on a fresh base or exits 4 having
committed nothing; Spark reads every row exactly once; and Spark's
remove_orphan_files (dry run) finds no file geocompact left, since a
geocompact commit attempt the catalog refuses deletes what it wrote.

Spark merge-on-read DELETEs: every remaining row is read once, and no
deleted row comes back, whether the rewrite or a DELETE lost the race.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import time
from pathlib import Path

import pytest

import recording_io
from icepeers import CATALOG, current_snapshot, metadata_location, spark_fingerprint
from test_ours_read_by_theirs import generate
from test_theirs_compacted_by_ours import spark_table

ROWS = 40000
APPEND = 500
BASE = 10_000_000  # appended rows' ids start here; generated ids are below
MAX_APPENDS = 60  # with generate's 21 metadata files, well inside the log's 100


def start_rewrite(gc, table: str, *extra: str) -> subprocess.Popen:
    argv = [str(gc.binary), "--warehouse", str(gc.warehouse), "--json", "rewrite",
            "--table", table, "--curve", "hilbert", "--allow-layout-change",
            "--option", "rewrite-all=true", "--option", "target-file-size-bytes=300000", *extra]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def snapshot_ids(spark, fq: str) -> set[int]:
    return {r[0] for r in spark.sql(f"SELECT snapshot_id FROM {fq}.snapshots").collect()}


def new_operations(spark, fq: str, before: set[int]) -> list[str]:
    return [r[0] for r in spark.sql(
        f"SELECT operation FROM {fq}.snapshots WHERE snapshot_id NOT IN "
        f"({', '.join(map(str, before))})").collect()]


def assert_rewrite_outcome(code: int, stderr: str, ops: list[str]) -> None:
    """The rewrite committed (on a fresh base), or exited 4 (a conflict)
    having committed nothing."""
    assert code in (0, 4), stderr
    if code == 0:
        assert ops.count("replace") == 1, ops
    else:
        assert "replace" not in ops, "exit 4 must commit nothing"


def orphan_dry_run(spark, catalog_db, table: str) -> set[str]:
    """The files Spark's remove_orphan_files would delete (none is).

    Spark's procedure refuses an older_than within 24 hours, so every file
    of the table is first dated three days back (the writers are done)."""
    root = Path(recording_io.local_path(metadata_location(catalog_db, table))).parent.parent
    old = time.time() - 3 * 86400
    for f in root.rglob("*"):
        if f.is_file():
            os.utime(f, (old, old))
    cutoff = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=2)).strftime("%Y-%m-%d %H:%M:%S")
    rows = spark.sql(
        f"CALL {CATALOG}.system.remove_orphan_files(table => '{table}', "
        f"older_than => TIMESTAMP '{cutoff}', dry_run => true)").collect()
    return {recording_io.local_path(r.orphan_file_location) for r in rows}


def test_pyiceberg_appends_during_rewrite(gc, spark, catalog_db, warehouse, ns):
    import pyarrow.compute as pc
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.exceptions import CommitFailedException

    table = f"{ns}.busy"
    fq = f"{CATALOG}.{table}"
    generate(gc, table, 2, "", rows=ROWS, commits=20)
    before = spark_fingerprint(spark, table)
    snaps_before = snapshot_ids(spark, fq)
    # A catalog of its own whose FileIO records what PyIceberg writes: its
    # own lost appends leave files too, which are not geocompact's.
    cat = SqlCatalog(CATALOG, uri=f"sqlite:///{catalog_db}", warehouse=f"file://{warehouse}",
                     **{"py-io-impl": "recording_io.RecordingFileIO"})
    template = cat.load_table(table).scan(limit=APPEND).to_arrow()
    assert template.num_rows == APPEND

    proc = start_rewrite(gc, table)
    appended, lost = [], 0
    # Append while the rewrite runs (and at least three times), at most
    # MAX_APPENDS times: the table keeps the last 100 metadata files in its
    # log (write.metadata.previous-versions-max), and an older one, out of
    # the log, is rightly an orphan to Spark though no one lost it.
    while (proc.poll() is None and len(appended) < MAX_APPENDS) or len(appended) < 3:
        start = BASE + len(appended) * APPEND
        batch = template.set_column(template.schema.get_field_index("id"), template.schema.field("id"),
                                    pc.add(template.column("id"), start))
        try:
            cat.load_table(table).append(batch)
        except CommitFailedException:
            lost += 1  # PyIceberg lost the race; the batch is appended again
            continue
        appended.append(start)
    _, err = proc.communicate()
    ops = new_operations(spark, fq, snaps_before)
    print(f"rewrite exit {proc.returncode}; {len(appended)} PyIceberg appends, {lost} lost; ops {ops}")
    assert_rewrite_outcome(proc.returncode, err, ops)
    assert ops.count("append") == len(appended)

    rows = spark.sql(f"SELECT count(*) n, count(DISTINCT id) d FROM {fq}").collect()[0]
    assert rows.n == rows.d, "a row is read twice"
    first = spark.sql(f"SELECT count(*) n, sum(id) s FROM {fq} WHERE id < {BASE}").collect()[0]
    assert (first.n, first.s) == (before.rows, before.id_sum)
    batches = spark.sql(f"SELECT count(*) n FROM {fq} WHERE id >= {BASE}").collect()[0]
    assert batches.n == APPEND * len(appended)

    orphans = orphan_dry_run(spark, catalog_db, table)
    ours = sorted(orphans - recording_io.CREATED)
    assert not ours, f"files no snapshot references, not written by PyIceberg: {ours}"


def test_spark_deletes_during_rewrite(gc, spark, ns):
    table = f"{ns}.deleting"
    fq = f"{CATALOG}.{table}"
    spark_table(spark, table, 2)
    snaps_before = snapshot_ids(spark, fq)
    first = current_snapshot(spark, table)

    proc = start_rewrite(gc, table)
    deleted, refused = [], 0
    # Delete while the rewrite runs (and at least three times). A DELETE
    # that fails (Spark's validation finding its files replaced) committed
    # nothing and runs again.
    k = 0
    while proc.poll() is None or len(deleted) < 3:
        pred = f"id % 97 = {k}"
        try:
            spark.sql(f"DELETE FROM {fq} WHERE {pred}")
        except Exception as e:  # noqa: BLE001 - any refusal is retried
            refused += 1
            assert refused < 20, f"Spark's DELETE keeps failing: {e}"
            continue
        deleted.append(pred)
        k += 1
    _, err = proc.communicate()
    ops = new_operations(spark, fq, snaps_before)
    print(f"rewrite exit {proc.returncode}; {len(deleted)} Spark DELETEs, {refused} refused; ops {ops}")
    assert_rewrite_outcome(proc.returncode, err, ops)
    assert ops.count("delete") + ops.count("overwrite") == len(deleted), ops

    gone = " OR ".join(f"({p})" for p in deleted)
    figures = ("SELECT count(*) n, count(DISTINCT id) d, sum(id) s, "
               "sum(cast(xxhash64(id, ts, device_id, geometry) AS decimal(38,0))) h FROM {src}")
    now = spark.sql(figures.format(src=fq)).collect()[0]
    want = spark.sql(figures.format(src=f"{fq} VERSION AS OF {first}") + f" WHERE NOT ({gone})").collect()[0]
    assert now.n == now.d, "a row is read twice"
    assert now == want, "the rows left are not the rows the DELETEs kept"
    assert spark.sql(f"SELECT count(*) FROM {fq} WHERE {gone}").collect()[0][0] == 0, \
        "a deleted row came back"


@pytest.fixture(autouse=True)
def _forget_recorded_files():
    recording_io.CREATED.clear()
    yield
