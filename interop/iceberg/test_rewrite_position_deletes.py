"""Spark's position delete files, rewritten by `geocompact rewrite-deletes`
and by Spark's own rewrite_position_delete_files procedure.

Spark writes small v2 tables (a few hundred rows, partitioned) whose
merge-on-read DELETEs leave several position delete files in each
partition. geocompact merges them; Spark, PyIceberg and DuckDB read
exactly the rows they read before, and the data files are the same
files. Position deletes that point at data files no longer live are
dropped, and delete files left with none are removed. On a table
upgraded to format version 3 the position delete files become deletion
vectors, one per data file; a data file that already has a vector keeps
it, since it holds all of the file's deletes. Twin tables,
built by the same Spark statements, are rewritten by Spark's procedure
and by `geocompact sql "CALL system.rewrite_position_delete_files(...)"`:
the result rows agree, and every difference is asserted and named here
(docs/interop.md lists them).
"""

from __future__ import annotations

import pytest

from icepeers import CATALOG, assert_metadata_tables_agree, current_snapshot, spark_fingerprint
from test_ours_read_by_theirs import all_peers, assert_peers_agree
from test_procedures import gc_call, spark_call
from test_theirs_compacted_by_ours import SPARK_COLUMNS, points

PER_COMMIT = 150
COMMITS = 2
ROWS = PER_COMMIT * COMMITS
DELETES = 6
POSITION = 1  # the delete_files table's content of a position delete file
RESULT_COLUMNS = ["rewritten_delete_files_count", "added_delete_files_count",
                  "rewritten_bytes_count", "added_bytes_count"]


def spark_deletes_table(spark, table: str, partition: str = "bucket(2, id)",
                        granularity: str = "partition", deletes: int = DELETES) -> None:
    """A v2 table Spark writes in COMMITS appends, then `deletes` small
    merge-on-read DELETEs, each touching every data file.

    Iceberg's default delete granularity (file, since 1.8) makes Spark merge
    a data file's earlier position deletes into each new delete file, so
    a table keeps one delete file per data file. With partition granularity
    every DELETE adds one delete file per partition: the build-up of small
    files rewrite_position_delete_files exists for."""
    fq = f"{CATALOG}.{table}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{table.split('.')[0]}")
    spark.sql(
        f"CREATE TABLE {fq} ({SPARK_COLUMNS}) USING iceberg PARTITIONED BY ({partition}) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
        f"'write.update.mode'='merge-on-read', 'write.delete.granularity'='{granularity}')")
    for b in range(COMMITS):
        rows = points(PER_COMMIT, seed=b, start_id=b * PER_COMMIT)
        spark.createDataFrame(rows, schema=SPARK_COLUMNS).coalesce(1).writeTo(fq).append()
    for k in range(deletes):
        spark.sql(f"DELETE FROM {fq} WHERE id % 25 = {k}")


def delete_files(spark, fq: str) -> list:
    """The live delete files, as Spark lists them; partition as JSON."""
    return spark.sql(
        f"SELECT content, file_format, to_json(partition) AS part, record_count, "
        f"file_size_in_bytes, referenced_data_file, file_path FROM {fq}.delete_files").collect()


def per_partition(files) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in files:
        out[f.part] = out.get(f.part, 0) + 1
    return out


def data_paths(spark, fq: str) -> set[str]:
    return {r[0] for r in spark.sql(f"SELECT file_path FROM {fq}.data_files").collect()}


def latest_operation(spark, fq: str) -> str:
    return spark.sql(f"SELECT operation FROM {fq}.snapshots "
                     f"ORDER BY committed_at DESC LIMIT 1").collect()[0][0]


def snapshot_count(spark, fq: str) -> int:
    return spark.sql(f"SELECT count(*) FROM {fq}.snapshots").collect()[0][0]


def rewrite_deletes(gc, table: str, *args: str) -> dict:
    return gc.run("rewrite-deletes", "--table", table, *args)


def spark_procedure(spark, table: str) -> dict:
    cols, rows = spark_call(spark, "CALL system.rewrite_position_delete_files("
                                   f"table => '{table}', options => map('rewrite-all', 'true'))")
    assert cols == RESULT_COLUMNS, cols
    assert len(rows) == 1, rows
    return rows[0]


def our_procedure(gc, table: str) -> dict:
    out = gc_call(gc, "CALL system.rewrite_position_delete_files("
                      f"table => '{table}', options => map('rewrite-all', 'true'))")
    assert out["columns"] == RESULT_COLUMNS, out
    assert len(out["rows"]) == 1, out
    return out["rows"][0]


def test_spark_position_deletes_merged(gc, spark, pyiceberg_catalog, duck, catalog_db, ns):
    """Six DELETEs leave six position delete files in each of two
    partitions; geocompact merges them into one per partition, in one
    replace snapshot, and no peer reads a different row."""
    table = f"{ns}.mor"
    fq = f"{CATALOG}.{table}"
    spark_deletes_table(spark, table)
    files = delete_files(spark, fq)
    assert {f.content for f in files} == {POSITION}
    assert {f.file_format for f in files} == {"PARQUET"}
    parts = per_partition(files)
    assert len(parts) == 2 and set(parts.values()) == {DELETES}, parts
    live = spark.sql(f"SELECT count(*) FROM {fq}").collect()[0][0]
    assert live == ROWS - sum(f.record_count for f in files)
    before = all_peers(spark, pyiceberg_catalog, duck, catalog_db, table)
    assert_peers_agree(before, live)
    paths = data_paths(spark, fq)
    snap = current_snapshot(spark, table)

    # A dry run counts the same files and commits nothing.
    dry = rewrite_deletes(gc, table, "--option", "rewrite-all=true", "--dry-run")
    assert dry["dry_run"] is True, dry
    assert dry["rewritten_delete_files_count"] == len(files), dry
    assert not dry.get("snapshot_id"), dry
    assert current_snapshot(spark, table) == snap, "a dry run committed"

    res = rewrite_deletes(gc, table, "--option", "rewrite-all=true")
    print("rewrite-deletes", res)
    assert res["dry_run"] is False, res
    assert res["rewritten_delete_files_count"] == len(files), res
    assert res["rewritten_bytes_count"] == sum(f.file_size_in_bytes for f in files), res
    after_files = delete_files(spark, fq)
    assert per_partition(after_files) == {p: 1 for p in parts}, "one small delete file per partition"
    assert {f.file_format for f in after_files} == {"PARQUET"}, "v2 keeps Parquet position deletes"
    assert res["added_delete_files_count"] == len(after_files) == 2, res
    assert res["added_bytes_count"] == sum(f.file_size_in_bytes for f in after_files), res
    assert sum(f.record_count for f in after_files) == sum(f.record_count for f in files), \
        "a position delete was lost or duplicated"

    new = current_snapshot(spark, table)
    assert new != snap
    assert latest_operation(spark, fq) == "replace"
    assert data_paths(spark, fq) == paths, "the data files changed"
    assert all_peers(spark, pyiceberg_catalog, duck, catalog_db, table) == before
    assert spark_fingerprint(spark, table, snapshot_id=snap) == before["spark"]
    assert_metadata_tables_agree(spark, gc, table)
    assert res.get("snapshot_id") == new, f"--json names no snapshot_id of its commit: {res}"


def dangling_table(spark, table: str) -> dict[str, int]:
    """A table whose first partition's delete files all point at a data
    file Spark's rewrite_data_files replaced: the files stay live
    (remove-dangling-deletes is off) but delete nothing. Returns the
    delete files by partition."""
    fq = f"{CATALOG}.{table}"
    # truncate(150, id): partition 0 holds the first append, 150 the second.
    spark_deletes_table(spark, table, partition="truncate(150, id)")
    before = per_partition(delete_files(spark, fq))
    _, rows = spark_call(spark, f"CALL system.rewrite_data_files(table => '{table}', where => 'id < 150', "
                                "options => map('rewrite-all', 'true', 'remove-dangling-deletes', 'false'))")
    assert rows[0]["rewritten_data_files_count"] == 1, rows
    assert rows[0]["removed_delete_files_count"] == 0, rows
    assert per_partition(delete_files(spark, fq)) == before, "Spark removed the dangling deletes"
    return before


def test_dangling_position_deletes_dropped(gc, spark, pyiceberg_catalog, duck, catalog_db, ns):
    """Delete files that point only at removed data files are removed, the
    rest merged; Spark's procedure on a twin does the same."""
    ours, theirs = f"{ns}.ours", f"{ns}.theirs"
    parts = dangling_table(spark, ours)
    assert dangling_table(spark, theirs) == parts
    twin_files = delete_files(spark, f"{CATALOG}.{theirs}")
    assert len(parts) == 2 and set(parts.values()) == {DELETES}, parts
    fq = f"{CATALOG}.{ours}"
    files = delete_files(spark, fq)
    gone = [p for p in parts if '"id_trunc":0' in p]
    assert len(gone) == 1, parts
    kept = sum(f.record_count for f in files if f.part not in gone)
    live = spark.sql(f"SELECT count(*) FROM {fq}").collect()[0][0]
    before = all_peers(spark, pyiceberg_catalog, duck, catalog_db, ours)
    assert_peers_agree(before, live)
    paths = data_paths(spark, fq)

    res = rewrite_deletes(gc, ours, "--option", "rewrite-all=true")
    print("rewrite-deletes", res)
    assert res["rewritten_delete_files_count"] == len(files), res
    after_files = delete_files(spark, fq)
    assert per_partition(after_files) == {p: 1 for p in parts if p not in gone}, \
        "the dangling partition keeps a delete file, or the other was not merged"
    assert res["added_delete_files_count"] == 1, res
    assert sum(f.record_count for f in after_files) == kept, "positions of live data files lost"
    assert latest_operation(spark, fq) == "replace"
    assert data_paths(spark, fq) == paths
    assert all_peers(spark, pyiceberg_catalog, duck, catalog_db, ours) == before

    mine = {k: res[k] for k in RESULT_COLUMNS}
    spark_row = spark_procedure(spark, theirs)
    print("rewrite_position_delete_files", spark_row, mine)
    assert mine["rewritten_delete_files_count"] == spark_row["rewritten_delete_files_count"]
    assert mine["added_delete_files_count"] == spark_row["added_delete_files_count"]
    assert spark_row["rewritten_bytes_count"] == sum(f.file_size_in_bytes for f in twin_files)
    assert per_partition(delete_files(spark, f"{CATALOG}.{theirs}")) == per_partition(after_files)
    assert spark_fingerprint(spark, theirs).shared() == before["spark"].shared()


@pytest.mark.parametrize("granularity", ["partition", "file"])
def test_side_by_side_with_spark_procedure(gc, spark, ns, granularity):
    """The same CALL on twin tables, through Spark and `geocompact sql`."""
    ours, theirs = f"{ns}.ours", f"{ns}.theirs"
    for t in (ours, theirs):
        spark_deletes_table(spark, t, granularity=granularity)
    files = {t: delete_files(spark, f"{CATALOG}.{t}") for t in (ours, theirs)}
    assert len(files[ours]) == len(files[theirs]) > 0
    assert per_partition(files[ours]) == per_partition(files[theirs])
    want = spark_fingerprint(spark, theirs)
    assert spark_fingerprint(spark, ours).shared() == want.shared()
    data_files = spark.sql(f"SELECT count(*) FROM {CATALOG}.{ours}.data_files").collect()[0][0]

    spark_row = spark_procedure(spark, theirs)
    mine = our_procedure(gc, ours)
    print(granularity, "rewrite_position_delete_files", spark_row, mine)
    assert mine["rewritten_delete_files_count"] == spark_row["rewritten_delete_files_count"] \
        == len(files[ours])
    # The bytes are each table's own: the delete files hold the data files'
    # paths, which differ between the twins.
    for t, row in ((ours, mine), (theirs, spark_row)):
        assert row["rewritten_bytes_count"] == sum(f.file_size_in_bytes for f in files[t]), (t, row)
    after = {t: delete_files(spark, f"{CATALOG}.{t}") for t in (ours, theirs)}
    for t in (ours, theirs):
        assert latest_operation(spark, f"{CATALOG}.{t}") == "replace", t
        assert sum(f.record_count for f in after[t]) == sum(f.record_count for f in files[t]), t
    if granularity == "partition":
        assert mine["added_delete_files_count"] == spark_row["added_delete_files_count"] == 2
    else:
        # Both keep the table's write.delete.granularity=file: one delete
        # file per data file.
        assert mine["added_delete_files_count"] == spark_row["added_delete_files_count"] == data_files, (mine, spark_row)
    assert per_partition(after[ours]) == per_partition(after[theirs])
    assert spark_fingerprint(spark, ours) == spark_fingerprint(spark, theirs) == want


def v3_table(spark, table: str) -> None:
    """Position delete files on a v3 table: Spark writes them at v2, the
    table is upgraded, and one more DELETE gives the first append's data
    files a deletion vector (the position deletes stay alongside)."""
    fq = f"{CATALOG}.{table}"
    spark_deletes_table(spark, table)
    spark.sql(f"ALTER TABLE {fq} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"DELETE FROM {fq} WHERE id % 25 = 20 AND id < {PER_COMMIT}")


def test_v3_position_deletes_become_vectors(gc, spark, pyiceberg_catalog, duck, catalog_db, ns):
    """A v3 table's position delete files become deletion vectors, at most
    one per data file; every peer reads the same rows."""
    ours, theirs = f"{ns}.ours", f"{ns}.theirs"
    for t in (ours, theirs):
        v3_table(spark, t)
    fq = f"{CATALOG}.{ours}"
    files = delete_files(spark, fq)
    formats = {f.file_format for f in files}
    assert formats == {"PARQUET", "PUFFIN"}, formats
    vectors_before = {f.referenced_data_file for f in files if f.file_format == "PUFFIN"}
    live = spark.sql(f"SELECT count(*) FROM {fq}").collect()[0][0]
    before = all_peers(spark, pyiceberg_catalog, duck, catalog_db, ours)
    assert_peers_agree(before, live)
    paths = data_paths(spark, fq)
    snap = current_snapshot(spark, ours)

    res = rewrite_deletes(gc, ours, "--option", "rewrite-all=true")
    print("rewrite-deletes v3", res)
    new = current_snapshot(spark, ours)
    assert new != snap
    assert latest_operation(spark, fq) == "replace"
    after_files = delete_files(spark, fq)
    assert {f.file_format for f in after_files} == {"PUFFIN"}, "position delete files left on v3"
    refs = [f.referenced_data_file for f in after_files]
    assert len(refs) == len(set(refs)), "a data file has two deletion vectors"
    assert set(refs) <= paths, "a vector for a data file that is not live"
    assert vectors_before <= set(refs), "a data file lost its vector"
    assert sum(f.record_count for f in after_files) == ROWS - live, \
        "the vectors do not hold exactly the deleted rows"
    assert data_paths(spark, fq) == paths
    assert all_peers(spark, pyiceberg_catalog, duck, catalog_db, ours) == before
    assert spark_fingerprint(spark, ours, snapshot_id=snap) == before["spark"]

    # Spark's DELETE merged the data file's position deletes into the
    # vector it wrote, and readers ignore the position deletes of a data
    # file that has a vector (the v3 spec): geocompact keeps those vectors
    # as they are, drops the position deletes they hold, and writes a
    # vector for each data file that had none.
    parquet = [f for f in files if f.file_format == "PARQUET"]
    kept = {f.referenced_data_file: f.file_path for f in files if f.file_format == "PUFFIN"}
    assert {f.referenced_data_file: f.file_path for f in after_files
            if f.referenced_data_file in kept} == kept, "an existing vector was rewritten"
    assert res["rewritten_delete_files_count"] == len(parquet), res
    assert res["added_delete_files_count"] == len(after_files) - len(kept), res
    # A vector's bytes are its blob's, as in Spark's result.
    blobs = spark.sql(f"SELECT referenced_data_file, content_size_in_bytes FROM {fq}.delete_files").collect()
    assert res["added_bytes_count"] == sum(b[1] for b in blobs if b[0] not in kept), (res, blobs)

    # Difference: Spark's procedure rewrites the vectors the data files
    # already had along with the position delete files (they count in
    # rewritten_delete_files_count, and each comes back as a new vector in
    # added_delete_files_count); geocompact leaves them in place. Both end
    # with one vector per data file that has deletes, holding the same rows.
    mine = {k: res[k] for k in RESULT_COLUMNS}
    spark_row = spark_procedure(spark, theirs)
    print("rewrite_position_delete_files v3", spark_row, mine)
    twin = delete_files(spark, f"{CATALOG}.{theirs}")
    assert {f.file_format for f in twin} == {"PUFFIN"}
    assert spark_row["rewritten_delete_files_count"] == len(files), spark_row
    assert spark_row["added_delete_files_count"] == len(twin) == len(after_files), spark_row
    assert mine["rewritten_delete_files_count"] == spark_row["rewritten_delete_files_count"] - len(kept)
    assert mine["added_delete_files_count"] == spark_row["added_delete_files_count"] - len(kept)
    assert sorted(f.record_count for f in twin) == sorted(f.record_count for f in after_files)
    assert spark_fingerprint(spark, theirs).shared() == before["spark"].shared()
    assert res.get("snapshot_id") == new, f"--json names no snapshot_id of its commit: {res}"


def test_refused_option_and_noops(gc, spark, ns):
    """An unknown option is refused by name before anything is written; a
    table with too few small delete files, or none, is left alone."""
    table = f"{ns}.few"
    fq = f"{CATALOG}.{table}"
    spark_deletes_table(spark, table, deletes=2)
    snap = current_snapshot(spark, table)
    n = snapshot_count(spark, fq)

    proc = gc.run("rewrite-deletes", "--table", table, "--option", "min-input-file=2",
                  check=False, json_out=False)
    assert proc.returncode != 0, proc.stdout
    assert "min-input-file" in proc.stderr, proc.stderr
    assert (current_snapshot(spark, table), snapshot_count(spark, fq)) == (snap, n), "a refused run committed"

    # --where keeps the delete files of the data files it may match: id 7
    # lies in one partition and in its first append's data file, which the
    # two partition-scoped delete files of that partition apply to.
    dry = rewrite_deletes(gc, table, "--where", "id = 7", "--option", "rewrite-all=true", "--dry-run")
    assert dry["rewritten_delete_files_count"] == 2, dry
    assert current_snapshot(spark, table) == snap

    # Two delete files per partition: under min-input-files (5), and small.
    res = rewrite_deletes(gc, table)
    assert res["rewritten_delete_files_count"] == res["added_delete_files_count"] == 0, res
    assert not res.get("snapshot_id"), res
    assert (current_snapshot(spark, table), snapshot_count(spark, fq)) == (snap, n)

    plain = f"{ns}.plain"
    spark.sql(f"CREATE TABLE {CATALOG}.{plain} ({SPARK_COLUMNS}) USING iceberg "
              "TBLPROPERTIES ('format-version'='2')")
    spark.createDataFrame(points(50, seed=3), schema=SPARK_COLUMNS).writeTo(f"{CATALOG}.{plain}").append()
    snap = current_snapshot(spark, plain)
    res = rewrite_deletes(gc, plain, "--option", "rewrite-all=true")
    assert res["rewritten_delete_files_count"] == res["added_delete_files_count"] == 0, res
    assert not res.get("snapshot_id"), res
    assert current_snapshot(spark, plain) == snap
    assert snapshot_count(spark, f"{CATALOG}.{plain}") == 1
