"""Delete maintenance by `geocompact rewrite-deletes` on tables other
engines write.

Equality deletes converted: Iceberg Java writes equality delete files
(through the Spark session, as test_equality_deletes.py does) on v2 and
v3 tables Spark wrote, partitioned, in three commits, with a Spark
merge-on-read DELETE before them and an append between them whose keys
match the earlier equality deletes (those rows stay: an equality delete
applies only to data files older than it). `--option
convert-equality-deletes=true` turns every equality delete file into
positions (deletion vectors on v3, at most one per data file) and removes
it; Spark and DuckDB read exactly the rows they read before, and the rows
computed here from what was written, at each of the two snapshots of the
commit. PyIceberg 0.12 refuses to read equality deletes ("PyIceberg does
not yet support equality deletes"): the refusal is asserted, and once the
deletes are positions PyIceberg reads the rows Spark reads.

Spark DELETEs while geocompact compacts the delete files: Spark runs
merge-on-read DELETEs on a v2 table with many position delete files
(write.delete.granularity=partition), and on one whose DELETEs replace a
data file's delete file (granularity file), while `geocompact
rewrite-deletes --option rewrite-all=true` runs again and again. Every
run commits one replace snapshot or exits 4 having committed nothing; no
row Spark deleted comes back, no other row is lost, and no row is read
twice.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

from icepeers import (
    CATALOG,
    assert_metadata_tables_agree,
    current_snapshot,
    duck_fingerprint,
    pyiceberg_fingerprint,
    spark_fingerprint,
)
from test_equality_deletes import EQUALITY, equality_delete
from test_ours_read_by_theirs import all_peers, assert_peers_agree
from test_rewrite_position_deletes import POSITION, data_paths, delete_files, per_partition
from test_theirs_compacted_by_ours import SPARK_COLUMNS, points
from test_writers_during_rewrite import new_operations, snapshot_ids

CONVERT = ("--option", "convert-equality-deletes=true")
OPERATION = "geocompact.operation"

# The equality deletes, in commit order: device ids.
EQ_FIRST, EQ_SECOND, EQ_LAST = [3, 17, 42], [5, 23], [61]
EARLY = EQ_FIRST + EQ_SECOND
FIRST = 300  # rows of the first append
LATE = 100  # rows appended between the second and the last equality delete


def create(spark, table: str, version: int, partition: str, granularity: str = "partition") -> str:
    fq = f"{CATALOG}.{table}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{table.split('.')[0]}")
    spark.sql(
        f"CREATE TABLE {fq} ({SPARK_COLUMNS}) USING iceberg PARTITIONED BY ({partition}) "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
        f"'write.update.mode'='merge-on-read', 'write.delete.granularity'='{granularity}')")
    return fq


def append(spark, fq: str, rows: list[dict]) -> None:
    spark.createDataFrame(rows, schema=SPARK_COLUMNS).coalesce(1).writeTo(fq).append()


def equality_table(spark, table: str, version: int) -> dict[int, int]:
    """Builds the table; returns the rows every reader must see, id ->
    device_id, computed from what was written.

    An append (one data file per partition); a Spark DELETE (position
    deletes on v2, deletion vectors on v3) of rows no equality delete
    matches; two equality deletes; an append whose device ids are those
    the two deleted (newer than both, so kept) and 61; a last equality
    delete of device 61, which applies to every data file, the late one
    too."""
    fq = create(spark, table, version, "bucket(2, id)")
    early = points(FIRST, seed=1)
    append(spark, fq, early)
    keys = EARLY + EQ_LAST
    spark.sql(f"DELETE FROM {fq} WHERE id % 25 = 0 AND device_id NOT IN ({', '.join(map(str, keys))})")
    assert equality_delete(spark, table, "device_id", EQ_FIRST) == 2
    assert equality_delete(spark, table, "device_id", EQ_SECOND) == 2
    late = points(LATE, seed=9, start_id=FIRST)
    for i, r in enumerate(late):
        # Every key the earlier equality deletes removed comes back, and
        # some rows for the last one.
        if i % 2 == 0:
            r["device_id"] = keys[(i // 2) % len(keys)]
    append(spark, fq, late)
    assert equality_delete(spark, table, "device_id", EQ_LAST) == 2
    want = {r["id"]: r["device_id"] for r in early
            if not (r["id"] % 25 == 0 and r["device_id"] not in keys) and r["device_id"] not in keys}
    want.update({r["id"]: r["device_id"] for r in late if r["device_id"] not in EQ_LAST})
    return want


@pytest.mark.parametrize("version", [pytest.param(2, id="v2"), pytest.param(3, id="v3")])
def test_equality_deletes_converted(gc, spark, pyiceberg_catalog, duck, catalog_db, ns, version):
    table = f"{ns}.eqconv"
    fq = f"{CATALOG}.{table}"
    want = equality_table(spark, table, version)
    late_kept = sum(1 for i, d in want.items() if i >= FIRST and d in EARLY)
    assert late_kept >= len(EARLY), "the late append has no row an earlier delete's keys match"
    files = delete_files(spark, fq)
    eq_files = sum(1 for f in files if f.content == EQUALITY)
    assert eq_files == 6, files
    positions_before = [f for f in files if f.content == POSITION]
    assert positions_before, "the Spark DELETE wrote no position deletes"
    assert {f.file_format for f in positions_before} == {"PARQUET" if version == 2 else "PUFFIN"}

    before = {"spark": spark_fingerprint(spark, table), "duckdb": duck_fingerprint(duck, catalog_db, table)}
    assert_peers_agree(before, len(want))
    assert before["spark"].id_sum == sum(want), "Spark does not read the rows written less the deleted ones"
    with pytest.raises(ValueError, match="does not yet support equality deletes"):
        pyiceberg_fingerprint(pyiceberg_catalog, table)
    paths = data_paths(spark, fq)
    snaps = snapshot_ids(spark, fq)

    # Refused with a where predicate, by the option's name; a dry run
    # counts the equality delete files. Neither commits.
    proc = gc.run("rewrite-deletes", "--table", table, *CONVERT, "--where", "id < 10",
                  check=False, json_out=False)
    assert proc.returncode != 0 and "convert-equality-deletes" in proc.stderr, (proc.returncode, proc.stderr)
    dry = gc.run("rewrite-deletes", "--table", table, *CONVERT, "--dry-run")
    assert dry["dry_run"] is True and dry["equality_delete_files_converted"] == eq_files, dry
    assert not dry.get("snapshot_id"), dry

    res = gc.run("rewrite-deletes", "--table", table, *CONVERT)
    print(f"v{version} rewrite-deletes", res)
    assert res["equality_delete_files_converted"] == eq_files, res
    assert res["deletion_vectors"] is (version == 3), res
    after_files = delete_files(spark, fq)
    assert not [f for f in after_files if f.content == EQUALITY], "an equality delete file is left"
    assert data_paths(spark, fq) == paths, "the data files changed"

    # Two snapshots (the refused run and the dry run committed none): a
    # row delta adding the positions, then a replace removing the
    # equality delete files; each reads the rows read before.
    new = spark.sql(f"SELECT snapshot_id, operation, summary['{OPERATION}'] op FROM {fq}.snapshots "
                    f"WHERE snapshot_id NOT IN ({', '.join(map(str, snaps))}) ORDER BY committed_at").collect()
    assert [(r.operation, r.op) for r in new] == [("delete", "convert-equality-deletes"),
                                                  ("replace", "convert-equality-deletes")], new
    assert res["snapshot_id"] == new[-1].snapshot_id == current_snapshot(spark, table), res
    assert spark_fingerprint(spark, table) == before["spark"]
    assert spark_fingerprint(spark, table, snapshot_id=new[0].snapshot_id) == before["spark"]
    assert duck_fingerprint(duck, catalog_db, table) == before["duckdb"]
    # PyIceberg reads the table once it holds position deletes only.
    assert pyiceberg_fingerprint(pyiceberg_catalog, table).shared() == before["spark"].shared()
    late = spark.sql(f"SELECT count(*) FROM {fq} WHERE id >= {FIRST} AND device_id IN "
                     f"({', '.join(map(str, EARLY))})").collect()[0][0]
    assert late == late_kept, "rows appended after an equality delete were deleted by it"

    positions = [f for f in after_files if f.content == POSITION]
    # Every deleted row has exactly one position: the Spark DELETE's rows
    # and the equality deletes' rows are apart.
    assert sum(f.record_count for f in positions) == FIRST + LATE - len(want), \
        "the position deletes do not hold exactly the deleted rows"
    if version == 2:
        assert {f.file_format for f in positions} == {"PARQUET"}
        # The Spark DELETE's files are kept as they were (one per
        # partition, too few to rewrite), and each partition gains one.
        assert {f.file_path for f in positions_before} <= {f.file_path for f in positions}
        assert per_partition(positions) == {p: n + 1 for p, n in per_partition(positions_before).items()}
        assert res["added_delete_files_count"] == len(positions) - len(positions_before), res
    else:
        assert {f.file_format for f in positions} == {"PUFFIN"}, "position delete files on v3"
        refs = [f.referenced_data_file for f in positions]
        assert len(refs) == len(set(refs)), "a data file has two deletion vectors"
        assert set(refs) <= paths
        # The Spark DELETE's vectors are merged into, not left beside.
        assert {f.referenced_data_file for f in positions_before} <= set(refs)
        assert_metadata_tables_agree(spark, gc, table)

    again = gc.run("rewrite-deletes", "--table", table, *CONVERT)
    assert again["equality_delete_files_converted"] == 0 and not again.get("snapshot_id"), again


class Runs:
    """`geocompact rewrite-deletes --option rewrite-all=true`, run again
    and again in a thread until stopped; every run's exit code and JSON."""

    def __init__(self, gc, table: str):
        self.argv = [str(gc.binary), "--warehouse", str(gc.warehouse), "--json", "rewrite-deletes",
                     "--table", table, "--option", "rewrite-all=true"]
        self.done: list[tuple[int, dict | None, str]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self) -> None:
        while not self.stop.is_set():
            p = subprocess.run(self.argv, capture_output=True, text=True)
            out = json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else None
            self.done.append((p.returncode, out, p.stderr))
            time.sleep(0.2)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def refusal(e: Exception) -> str:
    """The line of Spark's error that says why (py4j's first line does not)."""
    lines = str(e).splitlines()
    return next((x.strip() for x in lines if "Exception:" in x), lines[0] if lines else "")[:300]


@pytest.mark.parametrize("granularity", ["partition", "file"])
def test_spark_deletes_during_rewrite_deletes(gc, spark, pyiceberg_catalog, duck, catalog_db, ns, granularity):
    """With write.delete.granularity=partition every Spark DELETE adds one
    position delete file per partition it touches and removes none, while
    geocompact merges them again and again. With file granularity Spark
    merges a data file's earlier deletes into each new delete file and
    removes them: Spark and geocompact then remove the same delete files,
    and whichever commits second must lose."""
    table = f"{ns}.deleting"
    fq = create(spark, table, 2, "bucket(4, id)", granularity)
    append(spark, fq, points(2000, seed=4))
    first = current_snapshot(spark, table)
    preds = [f"id % 31 = {k}" for k in range(4)]
    for p in preds:
        spark.sql(f"DELETE FROM {fq} WHERE {p}")
    files = per_partition(delete_files(spark, fq))
    assert len(files) == 4 and set(files.values()) == {4 if granularity == "partition" else 1}, files
    snaps_before = snapshot_ids(spark, fq)

    deleted, refused, k = [], [], len(preds)
    with Runs(gc, table) as runs:
        # Delete while the runs go on, at least five times and until three
        # runs ended. A DELETE Spark refuses committed nothing and runs
        # again.
        while len(deleted) < 5 or len(runs.done) < 3:
            pred = f"id % 31 = {k}"
            try:
                spark.sql(f"DELETE FROM {fq} WHERE {pred}")
            except Exception as e:  # noqa: BLE001 - any refusal is retried
                refused.append(refusal(e))
                assert len(refused) < 20, f"Spark's DELETE keeps failing: {refused}"
                continue
            deleted.append(pred)
            k += 1
    codes = [c for c, _, _ in runs.done]
    ops = new_operations(spark, fq, snaps_before)
    print(f"{granularity}: {len(runs.done)} rewrite-deletes runs, exits {codes}; {len(deleted)} Spark DELETEs, "
          f"{len(refused)} refused {refused[:3]}; ops {ops}")
    bad = [(c, e) for c, _, e in runs.done if c not in (0, 4)]
    assert not bad, bad
    won = [o for c, o, _ in runs.done if c == 0 and o.get("snapshot_id")]
    assert all(o.get("noop_reason") for c, o, _ in runs.done if c == 0 and not o.get("snapshot_id"))
    assert all(o["snapshot_ids"] == [o["snapshot_id"]] for o in won), won
    committed = {o["snapshot_id"] for o in won}
    ours = {r[0] for r in spark.sql(f"SELECT snapshot_id FROM {fq}.snapshots "
                                    f"WHERE summary['{OPERATION}'] = 'rewrite-position-delete-files'").collect()}
    assert ours == committed, "a run that exited 4 committed, or a run's commit is not in the table"
    assert ops.count("replace") == len(committed), ops
    assert ops.count("delete") + ops.count("overwrite") == len(deleted), ops
    assert committed, "no rewrite-deletes run committed"

    gone = " OR ".join(f"({p})" for p in preds + deleted)
    rows = "SELECT count(*) n, count(DISTINCT id) d, sum(id) s, " \
           "sum(cast(xxhash64(id, ts, device_id, geometry) AS decimal(38,0))) h FROM {src}"
    now = spark.sql(rows.format(src=fq)).collect()[0]
    want = spark.sql(rows.format(src=f"{fq} VERSION AS OF {first}") + f" WHERE NOT ({gone})").collect()[0]
    assert now.n == now.d, "a row is read twice"
    assert now == want, "the rows left are not the rows the DELETEs kept"
    assert spark.sql(f"SELECT count(*) FROM {fq} WHERE {gone}").collect()[0][0] == 0, "a deleted row came back"
    assert_peers_agree(all_peers(spark, pyiceberg_catalog, duck, catalog_db, table), now.n)
