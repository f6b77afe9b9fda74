"""Tables Spark and PyIceberg write, compacted by geocompact.

Spark writes v2 tables with position deletes (merge-on-read DELETE), v3
tables with deletion vectors and row lineage, and tables whose partition
spec and schema evolved (renamed and dropped columns); PyIceberg appends
and overwrites. geocompact validates, benches and rewrites each, and the
writer reads back exactly the rows it read before. What geocompact cannot
keep is refused by name before anything is written.
"""

from __future__ import annotations

import datetime as dt
import random
import struct

import pytest

from icepeers import (
    CATALOG,
    assert_metadata_tables_agree,
    current_snapshot,
    pyiceberg_fingerprint,
    spark_fingerprint,
)

ROWS = 20000


def points(n: int, seed: int, start_id: int = 0):
    """n WKB points in a few clusters, with their bbox columns."""
    rnd = random.Random(seed)
    centres = [(rnd.uniform(-170, 170), rnd.uniform(-80, 80)) for _ in range(6)]
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    rows = []
    for i in range(n):
        cx, cy = centres[rnd.randrange(len(centres))]
        x, y = cx + rnd.gauss(0, 2), cy + rnd.gauss(0, 2)
        rows.append({
            "id": start_id + i,
            "ts": t0 + dt.timedelta(seconds=rnd.randrange(3 * 86400)),
            "device_id": rnd.randrange(100),
            "geometry": struct.pack("<BIdd", 1, 1, x, y),
            "bbox_minx": x, "bbox_miny": y, "bbox_maxx": x, "bbox_maxy": y,
        })
    return rows


SPARK_COLUMNS = ("id bigint, ts timestamp, device_id int, geometry binary, "
                 "bbox_minx double, bbox_miny double, bbox_maxx double, bbox_maxy double")


# Spark's WKB column is plain binary without GeoParquet metadata: geocompact
# is told which column holds the geometry by this table property.
GEOMETRY_PROP = "geocompact.geometry.column"


def spark_table(spark, table: str, version: int, partition: str = "", batches: int = 8,
                props: dict | None = None) -> None:
    fq = f"{CATALOG}.{table}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{table.split('.')[0]}")
    tblprops = {"format-version": str(version), "write.delete.mode": "merge-on-read",
                "write.update.mode": "merge-on-read", GEOMETRY_PROP: "geometry", **(props or {})}
    spark.sql(
        f"CREATE TABLE {fq} ({SPARK_COLUMNS}) USING iceberg "
        + (f"PARTITIONED BY ({partition}) " if partition else "")
        + "TBLPROPERTIES (" + ", ".join(f"'{k}'='{v}'" for k, v in tblprops.items()) + ")")
    per = ROWS // batches
    for b in range(batches):
        df = spark.createDataFrame(points(per, seed=b, start_id=b * per), schema=SPARK_COLUMNS)
        df.coalesce(1).writeTo(fq).append()


def rewrite(gc, table: str, *args: str):
    res = gc.run("rewrite", "--table", table, "--allow-layout-change",
                 "--option", "rewrite-all=true", *args)
    assert res["verified"], res
    assert res["added_data_files_count"] > 0, res
    return res


def validate_and_bench(gc, table: str):
    report = gc.run("validate", "--table", table)
    assert report is not None
    bench = gc.run("bench", "--table", table, "--layouts", "current,hilbert")
    assert bench is not None
    return report, bench


def test_curve_needs_a_geometry_or_bbox_columns(gc, spark, ns):
    """A Spark table with a WKB column but neither bbox columns nor the
    property naming the geometry column: a curve rewrite is refused by
    name before anything is written, binpack (which needs no geometry)
    rewrites it, and once the property is set the curve rewrite runs."""
    table = f"{ns}.bare"
    fq = f"{CATALOG}.{table}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{ns}")
    spark.sql(f"CREATE TABLE {fq} (id bigint, ts timestamp, geometry binary) USING iceberg")
    for b in range(4):
        df = spark.createDataFrame(points(2000, seed=b, start_id=b * 2000), schema=SPARK_COLUMNS)
        df.select("id", "ts", "geometry").coalesce(1).writeTo(fq).append()
    before = spark_fingerprint(spark, table)
    snap = current_snapshot(spark, table)
    proc = gc.run("rewrite", "--table", table, "--curve", "hilbert", "--allow-layout-change",
                  "--option", "rewrite-all=true", check=False, json_out=False)
    assert proc.returncode != 0
    assert GEOMETRY_PROP in proc.stderr, proc.stderr
    assert current_snapshot(spark, table) == snap, "a refused rewrite committed"

    rewrite(gc, table, "--strategy", "binpack")
    assert spark_fingerprint(spark, table) == before
    spark.sql(f"ALTER TABLE {fq} SET TBLPROPERTIES ('{GEOMETRY_PROP}'='geometry')")
    rewrite(gc, table, "--curve", "hilbert")
    assert spark_fingerprint(spark, table) == before


@pytest.mark.parametrize("version", [2, 3], ids=["v2-position-deletes", "v3-deletion-vectors"])
def test_spark_table_with_deletes(gc, spark, ns, version):
    table = f"{ns}.spark_deletes"
    fq = f"{CATALOG}.{table}"
    spark_table(spark, table, version)
    spark.sql(f"DELETE FROM {fq} WHERE id % 5 = 0")
    assert spark.sql(f"SELECT count(*) FROM {fq}.delete_files").collect()[0][0] > 0
    before = spark_fingerprint(spark, table)
    assert before.rows == ROWS - ROWS // 5
    snap = current_snapshot(spark, table)

    # geocompact's delete debt is Spark's delete_files table, by kind.
    kinds = spark.sql(f"SELECT file_format = 'PUFFIN' AS dv, count(*) n, sum(record_count) r "
                      f"FROM {fq}.delete_files GROUP BY 1").collect()
    want = {"deletion_vectors": 0, "position_delete_files": 0}
    for k in kinds:
        want["deletion_vectors" if k.dv else "position_delete_files"] += k.n
    debt = gc.run("metrics", "--table", table)["deletes"]
    assert {k: debt[k] for k in want} == want, (debt, kinds)
    assert (debt["deletion_vectors"] > 0) == (version == 3)
    assert debt["deleted_records"] == sum(k.r for k in kinds) == ROWS // 5
    assert debt["deleted_fraction"] == pytest.approx(0.2)

    validate_and_bench(gc, table)
    res = rewrite(gc, table, "--curve", "hilbert")
    assert res["removed_delete_files_count"] > 0, res
    assert "deletes" not in gc.run("metrics", "--table", table), "delete debt left after the rewrite"

    assert spark_fingerprint(spark, table) == before
    assert spark_fingerprint(spark, table, snapshot_id=snap) == before
    assert spark.sql(f"SELECT count(*) FROM {fq}.delete_files").collect()[0][0] == 0
    assert_metadata_tables_agree(spark, gc, table)


def test_spark_v3_row_lineage_is_kept(gc, spark, ns):
    """A v3 table's rows keep their _row_id through a rewrite, as Spark's
    own rewrite_data_files keeps them."""
    table = f"{ns}.lineage"
    fq = f"{CATALOG}.{table}"
    spark_table(spark, table, 3)
    q = f"SELECT count(*) n, sum(cast(_row_id AS decimal(38,0))) s, count(DISTINCT _row_id) d FROM {fq}"
    before = spark.sql(q).collect()[0]
    assert before.d == ROWS
    rewrite(gc, table, "--strategy", "binpack")
    after = spark.sql(q).collect()[0]
    assert after == before
    pairs = spark.sql(f"SELECT sum(cast(xxhash64(id, _row_id) AS decimal(38,0))) FROM {fq}").collect()[0][0]
    old = spark.sql(f"SELECT sum(cast(xxhash64(id, _row_id) AS decimal(38,0))) FROM {fq} "
                    f"VERSION AS OF {spark.sql(f'SELECT parent_id FROM {fq}.snapshots ORDER BY committed_at DESC LIMIT 1').collect()[0][0]}").collect()[0][0]
    assert pairs == old, "every row keeps its own _row_id"


def test_spark_partition_and_schema_evolution(gc, spark, ns):
    table = f"{ns}.evolved"
    fq = f"{CATALOG}.{table}"
    spark_table(spark, table, 2, partition="days(ts)", batches=4)
    spark.sql(f"ALTER TABLE {fq} ADD PARTITION FIELD bucket(4, device_id)")
    spark.sql(f"ALTER TABLE {fq} RENAME COLUMN device_id TO device")
    spark.sql(f"ALTER TABLE {fq} ADD COLUMN note string")
    spark.sql(f"ALTER TABLE {fq} DROP COLUMN note")
    spark.sql(f"ALTER TABLE {fq} ADD COLUMN speed double")
    more = spark.createDataFrame(points(4000, seed=99, start_id=ROWS), schema=SPARK_COLUMNS)
    more = more.withColumnRenamed("device_id", "device").selectExpr("*", "id * 0.5 AS speed")
    more.writeTo(fq).append()
    before = spark_fingerprint(spark, table)
    assert before.rows == ROWS + 4000
    specs = {r[0] for r in spark.sql(f"SELECT spec_id FROM {fq}.files").collect()}
    assert specs == {0, 1}

    validate_and_bench(gc, table)
    rewrite(gc, table, "--strategy", "binpack")
    assert spark_fingerprint(spark, table) == before
    assert_metadata_tables_agree(spark, gc, table)
    cols = [f.name for f in spark.table(fq).schema.fields]
    assert "device" in cols and "device_id" not in cols and "note" not in cols


def test_pyiceberg_appends_and_overwrites(gc, spark, pyiceberg_catalog, ns):
    import pyarrow as pa
    from pyiceberg.expressions import LessThan

    table = f"{ns}.pyice"
    pyiceberg_catalog.create_namespace(ns)
    first = pa.Table.from_pylist(points(2500, seed=0))
    schema = pa.schema([
        pa.field("id", pa.int64()), pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("device_id", pa.int32()), pa.field("geometry", pa.binary()),
        *[pa.field(c, pa.float64()) for c in ("bbox_minx", "bbox_miny", "bbox_maxx", "bbox_maxy")],
    ])
    tbl = pyiceberg_catalog.create_table(table, schema=schema,
                                         properties={GEOMETRY_PROP: "geometry"})
    for b in range(6):
        tbl.append(pa.Table.from_pylist(points(2500, seed=b, start_id=b * 2500), schema=schema))
    tbl.overwrite(pa.Table.from_pylist(points(1000, seed=50, start_id=100000), schema=schema),
                  overwrite_filter=LessThan("id", 2000))
    before_py = pyiceberg_fingerprint(pyiceberg_catalog, table)
    before_spark = spark_fingerprint(spark, table)
    assert before_py.rows == 6 * 2500 - 2000 + 1000
    assert before_py.shared() == before_spark.shared()

    validate_and_bench(gc, table)
    rewrite(gc, table, "--curve", "kd")
    assert pyiceberg_fingerprint(pyiceberg_catalog, table) == before_py
    assert spark_fingerprint(spark, table) == before_spark
    assert_metadata_tables_agree(spark, gc, table)
