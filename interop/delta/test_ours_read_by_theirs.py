"""Delta tables geocompact writes, read by delta-rs, Delta on Spark and
DuckDB: every peer computes the same figures over the rows, before and after
each of geocompact's commits, and Delta's own history and streaming readers
see our OPTIMIZE as a change of layout only."""

from __future__ import annotations

import pathlib

import pytest
from conftest import (
    all_figures,
    assert_all_equal,
    commit_actions,
    data_files,
    delta_rs_figures,
    geoparquet_batches,
    log_versions,
    parquet_figures,
    points,
    spark_figures,
    write_geoparquet,
)


def ingest(gc, table: pathlib.Path, src: pathlib.Path, commits: int, rows: int, *, partition: str | None = None, start: int = 0):
    """One ingest per source file: commits versions of rows rows each."""
    files = geoparquet_batches(src, commits, rows, start)
    for i, f in enumerate(files):
        args = ["ingest", "--delta", str(table), str(f)]
        if i == 0 and not (table / "_delta_log").exists():
            args.append("--create")
            if partition:
                args += ["--partition-by", partition]
        gc.run(*args)
    return files


def assert_optimize_commit(spark, table: pathlib.Path, version: int, removed: int, added: int):
    """Spark's DESCRIBE HISTORY names the version an OPTIMIZE, and the
    version's own actions (read by Spark's JSON reader) change no data."""
    hist = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").where(f"version = {version}").collect()
    assert len(hist) == 1, f"DESCRIBE HISTORY has no version {version}"
    assert hist[0]["operation"] == "OPTIMIZE"
    assert hist[0]["isBlindAppend"] in (False, None)
    log = spark.read.json(str(table / "_delta_log" / f"{version:020d}.json"))
    adds = log.where("add IS NOT NULL").select("add.path", "add.dataChange").collect()
    rems = log.where("remove IS NOT NULL").select("remove.path", "remove.dataChange").collect()
    assert len(adds) == added and len(rems) == removed
    assert all(r["dataChange"] is False for r in adds + rems), "OPTIMIZE actions must carry dataChange=false"


def spark_file_count(spark, table: pathlib.Path) -> int:
    return spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]["numFiles"]


def test_ingest_read_by_peers(gc, spark, tmp_path):
    table = tmp_path / "pings"
    files = ingest(gc, table, tmp_path / "src", commits=4, rows=150)
    want = parquet_figures(files)
    assert want.n == 600
    assert_all_equal(all_figures(spark, table), want)
    assert log_versions(table) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "layout",
    [["--curve", "hilbert"], ["--curve", "kd"], ["--strategy", "binpack"]],
    ids=["hilbert", "kd", "binpack"],
)
def test_optimize_read_by_peers(gc, spark, tmp_path, layout):
    table = tmp_path / "pings"
    ingest(gc, table, tmp_path / "src", commits=6, rows=120, partition="region")
    before = all_figures(spark, table)
    want = before["spark"]
    assert_all_equal(before, want)
    files_before = spark_file_count(spark, table)

    res = gc.run("rewrite", "--delta", str(table), *layout, "--option", "rewrite-all=true")
    assert res["verified"] is True
    assert res["versions_committed"] == 1
    (version,) = res["versions"]
    assert res["rewritten_data_files_count"] == files_before
    assert res["added_data_files_count"] == 2  # one per region

    assert_all_equal(all_figures(spark, table), want)
    assert spark_file_count(spark, table) == 2
    assert_optimize_commit(spark, table, version, removed=files_before, added=2)
    # Time travel to the version before the OPTIMIZE reads the old files.
    assert spark_figures(spark, table, version=version - 1) == want
    assert delta_rs_figures(table, version=version - 1) == want


def test_optimize_where_partition_read_by_peers(gc, spark, tmp_path):
    table = tmp_path / "pings"
    ingest(gc, table, tmp_path / "src", commits=5, rows=120, partition="region")
    want = spark_figures(spark, table)
    west_before = {f for f in data_files(table) if f.startswith("region=west/")}

    res = gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--where", "region = 'east'", "--option", "rewrite-all=true")
    (version,) = res["versions"]
    acts = commit_actions(table, version)
    removed = [a["remove"]["path"] for a in acts if "remove" in a]
    assert removed and all(p.startswith("region=east/") for p in removed)
    assert_all_equal(all_figures(spark, table), want)
    # Spark plans the west partition from the files it had before.
    live_west = {
        r["p"].split(str(table) + "/", 1)[-1]
        for r in spark.sql(f"SELECT input_file_name() AS p FROM delta.`{table}` WHERE region = 'west'").collect()
    }
    assert live_west and {p.replace("%3D", "=") for p in live_west} <= west_before


def test_optimize_where_data_column_read_by_peers(gc, spark, tmp_path):
    table = tmp_path / "pings"
    ingest(gc, table, tmp_path / "src", commits=6, rows=100)
    want = spark_figures(spark, table)
    # Ids grow with the commit: ids >= 300 are in the last three files only.
    res = gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--where", "id >= 300", "--option", "rewrite-all=true")
    assert res["rewritten_data_files_count"] == 3
    assert_all_equal(all_figures(spark, table), want)
    assert spark_file_count(spark, table) == 4


def test_vacuum_read_by_peers(gc, spark, tmp_path):
    table = tmp_path / "pings"
    ingest(gc, table, tmp_path / "src", commits=5, rows=100)
    want = spark_figures(spark, table)
    gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--option", "rewrite-all=true")
    assert len(data_files(table)) == 6

    res = gc.run("vacuum", "--delta", str(table), "--retain", "0h", "--force")
    assert len(data_files(table)) == 1, res
    assert_all_equal(all_figures(spark, table), want)
    # Spark's own VACUUM finds nothing left to delete.
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        left = spark.sql(f"VACUUM delta.`{table}` RETAIN 0 HOURS DRY RUN").collect()
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")
    assert left == []


def test_checkpoint_read_by_peers(gc, spark, tmp_path):
    """geocompact's checkpoints are the only record of the early versions
    once their commits are gone: every peer must read the table from them."""
    table = tmp_path / "pings"
    ingest(gc, table, tmp_path / "src", commits=1, rows=100)
    gc.run("alter", "--delta", str(table), "--set", "delta.checkpointInterval=3")
    ingest(gc, table, tmp_path / "src", commits=5, rows=100, start=100)
    res = gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--option", "rewrite-all=true")
    (version,) = res["versions"]
    assert version == 7
    log = table / "_delta_log"
    checkpoints = sorted(p.name for p in log.glob("*.checkpoint.parquet"))
    assert checkpoints == [f"{3:020d}.checkpoint.parquet", f"{6:020d}.checkpoint.parquet"]
    want = spark_figures(spark, table)
    assert want.n == 600

    # Log cleanup: the commits a checkpoint covers go.
    for v in range(0, 7):
        (log / f"{v:020d}.json").unlink()
    for crc in log.glob("*.crc"):
        crc.unlink()
    spark.catalog.clearCache()
    assert_all_equal(all_figures(spark, table), want)
    from deltalake import DeltaTable

    assert DeltaTable(str(table)).version() == 7
    # The checkpoint's add actions carry the statistics Spark skips files by.
    stats = spark.sql(f"SELECT count(*) AS n FROM delta.`{table}` WHERE bbox_minx > 1000").collect()[0]["n"]
    assert stats == 0


def test_streaming_read_does_not_reemit_optimize(gc, spark, tmp_path):
    table = tmp_path / "pings"
    ingest(gc, table, tmp_path / "src", commits=4, rows=100)
    sink, ck = tmp_path / "sink", tmp_path / "ck"

    def drain() -> int:
        q = (
            spark.readStream.format("delta").load(str(table))
            .writeStream.format("parquet")
            .option("path", str(sink))
            .option("checkpointLocation", str(ck))
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination()
        assert q.exception() is None
        return spark.read.parquet(str(sink)).count()

    assert drain() == 400
    res = gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--option", "rewrite-all=true")
    assert res["versions_committed"] == 1
    assert drain() == 400, "the stream re-emitted rows an OPTIMIZE rewrote"
    ingest(gc, table, tmp_path / "src", commits=1, rows=50, start=400)
    assert drain() == 450
    ids = spark.read.parquet(str(sink)).selectExpr("count(DISTINCT id) AS d", "sum(id) AS s").collect()[0]
    assert ids["d"] == 450 and ids["s"] == sum(range(450))


def hostile_partitions(src: pathlib.Path, values: list[str], rows: int) -> list[pathlib.Path]:
    """One GeoParquet file per partition value, rows rows each."""
    src.mkdir(parents=True, exist_ok=True)
    return [
        write_geoparquet(src / f"part-{i:03d}.parquet", points(i * rows, rows, region=v))
        for i, v in enumerate(values)
    ]


def assert_add_paths_are_uri_references(table: pathlib.Path):
    """Every add path of the log is a relative reference java.net.URI
    reads without a scheme: no bare ':' (Delta on Spark resolves add paths
    with it)."""
    for v in log_versions(table):
        for a in commit_actions(table, v):
            if "add" in a:
                assert ":" not in a["add"]["path"], a["add"]["path"]


def test_timestamp_partitions_read_by_peers(gc, spark, tmp_path):
    # Partition values with ':' (a timestamp's time of day), after ingest
    # and after an OPTIMIZE: Spark, delta-rs and DuckDB read every row.
    table = tmp_path / "by_ts"
    files = geoparquet_batches(tmp_path / "src", 2, 6)
    want = parquet_figures(files)
    for i, f in enumerate(files):
        args = ["ingest", "--delta", str(table), str(f)]
        if i == 0:
            args += ["--create", "--partition-by", "ts"]
        gc.run(*args)
    assert_add_paths_are_uri_references(table)
    assert_all_equal(all_figures(spark, table), want)

    res = gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--option", "rewrite-all=true")
    assert res["verified"] is True
    assert_add_paths_are_uri_references(table)
    assert_all_equal(all_figures(spark, table), want)
    got = spark.sql(f"SELECT count(DISTINCT ts) AS n FROM delta.`{table}`").collect()[0]["n"]
    assert got == 12


def test_hostile_partition_values_read_by_peers(gc, spark, tmp_path):
    values = ["a:b", "50%", "a b", "x=y", "a/b", "Zürich", "x/../../../OUT", "#?"]
    table = tmp_path / "hostile"
    files = hostile_partitions(tmp_path / "src", values, 5)
    want = parquet_figures(files)
    gc.run("ingest", "--delta", str(table), "--create", "--partition-by", "region", *map(str, files))
    assert_add_paths_are_uri_references(table)
    assert_all_equal(all_figures(spark, table), want)
    res = gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--option", "rewrite-all=true")
    assert res["verified"] is True
    assert_add_paths_are_uri_references(table)
    assert_all_equal(all_figures(spark, table), want)
    regions = {r["region"] for r in spark.sql(f"SELECT DISTINCT region FROM delta.`{table}`").collect()}
    assert regions == set(values)
    # Nothing was written outside the table.
    assert not (tmp_path / "OUT").exists()
    assert all(str(p.resolve()).startswith(str(table.resolve())) for p in table.rglob("*.parquet"))
