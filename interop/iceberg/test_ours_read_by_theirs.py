"""Tables geocompact writes, read by Spark, PyIceberg and DuckDB.

For each table kind (format v2 and v3, unpartitioned and day-partitioned)
geocompact generates a fragmented table; every peer computes its own
fingerprint of the rows (icepeers.py); then geocompact rewrites the table
with each layout in turn, and after each rewrite every peer must compute
exactly the figures it computed before, the peers must agree with each
other and with geocompact's row count, and Spark's time travel to the
snapshot before the rewrite must return the old rows.
"""

from __future__ import annotations

import pytest

from icepeers import (
    CATALOG,
    assert_metadata_tables_agree,
    current_snapshot,
    duck_fingerprint,
    pyiceberg_fingerprint,
    spark_fingerprint,
)

ROWS = 20000
COMMITS = 12

KINDS = [
    pytest.param(2, "", id="v2"),
    pytest.param(2, "day(ts)", id="v2-day"),
    pytest.param(3, "", id="v3"),
    pytest.param(3, "day(ts)", id="v3-day"),
]


def all_peers(spark, pyiceberg_catalog, duck, catalog_db, table):
    """Every peer's fingerprint; PyIceberg's only when its catalog is given."""
    figures = {"spark": spark_fingerprint(spark, table)}
    if pyiceberg_catalog is not None:
        figures["pyiceberg"] = pyiceberg_fingerprint(pyiceberg_catalog, table)
    figures["duckdb"] = duck_fingerprint(duck, catalog_db, table)
    return figures


def assert_peers_agree(figures, rows):
    shared = {peer: f.shared() for peer, f in figures.items()}
    assert len({(n, i) for n, _, i in shared.values()}) == 1, f"peers disagree: {shared}"
    geo = {g for _, g, _ in shared.values() if g is not None}
    assert len(geo) == 1, f"peers read different geometries: {shared}"
    for peer, f in figures.items():
        assert f.rows == rows, f"{peer} reads {f.rows} rows, geocompact wrote {rows}"


def generate(gc, table, version, partition, rows=ROWS, commits=COMMITS, seed=1):
    args = ["generate", "--table", table, "--rows", str(rows), "--commits", str(commits),
            "--format-version", str(version), "--distribution", "clustered",
            "--seed", str(seed)]
    if version == 3:
        args.append("--bbox-columns")
    if partition:
        args += ["--partition-by", partition]
    res = gc.run(*args)
    assert res["rows"] == rows
    return res


@pytest.mark.parametrize("version,partition", KINDS)
def test_rewrites_keep_every_row_for_every_peer(gc, spark, pyiceberg_catalog, duck, catalog_db,
                                                ns, version, partition):
    table = f"{ns}.pings"
    generate(gc, table, version, partition)
    before = all_peers(spark, pyiceberg_catalog, duck, catalog_db, table)
    assert_peers_agree(before, ROWS)
    if version == 3:
        assert before["pyiceberg"].geo_sum is None  # see icepeers.pyiceberg_fingerprint
        with pytest.raises(Exception, match="promote an binary to geometry"):
            pyiceberg_catalog.load_table(table).scan().to_arrow()

    first = current_snapshot(spark, table)
    for layout in ["binpack", "hilbert", "str", "kd", "auto"]:
        snap = current_snapshot(spark, table)
        args = ["rewrite", "--table", table, "--allow-layout-change",
                "--option", "rewrite-all=true", "--option", "target-file-size-bytes=200000"]
        args += ["--strategy", "binpack"] if layout == "binpack" else ["--curve", layout]
        res = gc.run(*args)
        assert res["verified"], res
        assert res["added_data_files_count"] > 0, f"{layout}: nothing rewritten: {res}"
        rewritten = sum(g["records"] for g in res["plan"]["groups"])
        assert rewritten == ROWS, f"{layout}: geocompact verified {rewritten} rows"

        after = all_peers(spark, pyiceberg_catalog, duck, catalog_db, table)
        assert after == before, f"after {layout}: {after} != {before}"
        assert current_snapshot(spark, table) != snap
        # Time travel to the snapshot before this rewrite reads the old files.
        assert spark_fingerprint(spark, table, snapshot_id=snap) == before["spark"]

    assert spark_fingerprint(spark, table, snapshot_id=first) == before["spark"]
    n = spark.sql(f"SELECT count(*) FROM {CATALOG}.{table}.snapshots "
                  f"WHERE operation = 'replace'").collect()[0][0]
    assert n == 5
    assert_metadata_tables_agree(spark, gc, table)


def test_ingested_table_reads_the_same_everywhere(gc, spark, pyiceberg_catalog, duck, catalog_db,
                                                  ns, tmp_path):
    """A GeoParquet file geocompact ingests (creating the table, adding the
    bbox columns) reads in every peer as the rows of the file."""
    import hashlib
    import json
    import struct

    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 5000
    geoms = [struct.pack("<BIdd", 1, 1, (i % 360) - 180 + 0.5, (i % 170) - 85 + 0.25) for i in range(n)]
    tbl = pa.table({"id": pa.array(range(n), pa.int64()), "geometry": pa.array(geoms, pa.binary())})
    geo = {"version": "1.1.0", "primary_column": "geometry",
           "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["Point"]}}}
    tbl = tbl.replace_schema_metadata({"geo": json.dumps(geo)})
    src = tmp_path / "points.parquet"
    pq.write_table(tbl, src)

    table = f"{ns}.ingested"
    gc.run("ingest", "--table", table, "--create", "--add-bbox", str(src))
    figures = all_peers(spark, pyiceberg_catalog, duck, catalog_db, table)
    assert_peers_agree(figures, n)
    want = sum(int(hashlib.md5(g).hexdigest()[:15], 16) for g in geoms)
    assert figures["spark"].geo_sum == want
    assert figures["spark"].id_sum == n * (n - 1) // 2
    cols = [f.name for f in spark.table(f"{CATALOG}.{table}").schema.fields]
    assert {"bbox_minx", "bbox_miny", "bbox_maxx", "bbox_maxy"} <= set(cols)
