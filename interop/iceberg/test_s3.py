"""Tables on an s3:// warehouse (the loopback S3 server of
scripts/start-s3.sh), read and written by Spark (S3FileIO from
iceberg-aws-bundle), PyIceberg (pyarrow's S3 file system) and DuckDB
(httpfs), through one SQL catalog file that geocompact, Spark's JdbcCatalog
and PyIceberg's SqlCatalog share.

geocompact generates and rewrites tables there, and a table Spark writes
and deletes from there is compacted by geocompact; every peer reads the
same rows before and after, and Spark's time travel to the snapshot before
a rewrite returns the old rows.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from icepeers import current_snapshot, spark_fingerprint
from remote import (
    S3_CATALOG,
    CatalogGc,
    assert_agree,
    assert_files_under,
    duck_s3,
    fresh_namespace,
    peer_figures,
    s3_service,
    set_spark_catalog,
    spark_table,
    sql_metadata_location,
)
from test_ours_read_by_theirs import generate

ROWS = 20000


@pytest.fixture(scope="session", autouse=True)
def s3():
    """The S3 server's variables, checked before Spark starts."""
    return s3_service()


@pytest.fixture(scope="module")
def lake(s3, gc, spark, duck, warehouse, tmp_path_factory):
    """The S3 warehouse, a fresh prefix of the bucket, and its catalog file,
    as each peer reaches them."""
    from pyiceberg.catalog.sql import SqlCatalog

    wh = s3.warehouse(fresh_namespace("interop"))
    db = warehouse.parent / "s3-catalog.db"
    config = tmp_path_factory.mktemp("s3") / "geocompact.yaml"
    config.write_text(
        "catalogs:\n"
        f"  {S3_CATALOG}:\n"
        "    type: sql\n"
        f"    warehouse: {wh}\n"
        "    properties:\n"
        f"      uri: file:{db}\n"
        "      sql.dialect: sqlite\n" + s3.geocompact_props())
    g = CatalogGc(gc, config, S3_CATALOG)
    g.run("tables")  # creates the catalog file before the peers open it
    set_spark_catalog(spark, S3_CATALOG, {
        "type": "jdbc", "uri": f"jdbc:sqlite:{db}", "jdbc.schema-version": "V1",
        "jdbc.busy_timeout": "30000", "warehouse": wh, **s3.iceberg_props()})
    py = SqlCatalog(S3_CATALOG, uri=f"sqlite:///{db}", warehouse=wh, **s3.pyiceberg_props())
    duck_s3(duck, s3)
    return SimpleNamespace(gc=g, db=db, py=py, warehouse=wh)


def figures(spark, duck, lake, table):
    meta = sql_metadata_location(lake.db, S3_CATALOG, table)
    assert meta.startswith(lake.warehouse + "/"), meta
    return peer_figures(spark, S3_CATALOG, lake.py, duck, f"iceberg_scan('{meta}')", table)


@pytest.mark.parametrize("version,partition", [
    pytest.param(2, "", id="v2"),
    pytest.param(3, "day(ts)", id="v3-day"),
])
def test_s3_rewrites_read_the_same(spark, duck, lake, version, partition):
    table = f"{fresh_namespace('s3')}.pings"
    generate(lake.gc, table, version, partition, rows=ROWS)
    before = figures(spark, duck, lake, table)
    assert_agree(before, ROWS)
    if version == 3:
        assert before["pyiceberg"].geo_sum is None  # PyIceberg reads no geometry type

    for layout in ["hilbert", "kd"]:
        snap = current_snapshot(spark, table, catalog=S3_CATALOG)
        res = lake.gc.run("rewrite", "--table", table, "--curve", layout, "--allow-layout-change",
                          "--option", "rewrite-all=true",
                          "--option", "target-file-size-bytes=200000")
        assert res["verified"], res
        assert res["added_data_files_count"] > 0, res
        assert sum(g["records"] for g in res["plan"]["groups"]) == ROWS

        after = figures(spark, duck, lake, table)
        assert after == before, f"after {layout}: {after} != {before}"
        assert current_snapshot(spark, table, catalog=S3_CATALOG) != snap
        assert spark_fingerprint(spark, table, snapshot_id=snap, catalog=S3_CATALOG) \
            == before["spark"]
    assert_files_under(spark, f"{S3_CATALOG}.{table}", lake.warehouse)


def test_spark_s3_table_with_position_deletes(spark, duck, lake):
    table = f"{fresh_namespace('s3')}.spark_deletes"
    fq = f"{S3_CATALOG}.{table}"
    spark_table(spark, S3_CATALOG, table, 2, ROWS)
    spark.sql(f"DELETE FROM {fq} WHERE id % 5 = 0")
    assert spark.sql(f"SELECT count(*) FROM {fq}.delete_files").collect()[0][0] > 0
    before = figures(spark, duck, lake, table)
    assert_agree(before, ROWS - ROWS // 5)
    snap = current_snapshot(spark, table, catalog=S3_CATALOG)

    assert lake.gc.run("validate", "--table", table) is not None
    res = lake.gc.run("rewrite", "--table", table, "--curve", "hilbert", "--allow-layout-change",
                      "--option", "rewrite-all=true")
    assert res["verified"], res
    assert res["removed_delete_files_count"] > 0, res

    assert figures(spark, duck, lake, table) == before
    assert spark_fingerprint(spark, table, snapshot_id=snap, catalog=S3_CATALOG) == before["spark"]
    assert spark.sql(f"SELECT count(*) FROM {fq}.delete_files").collect()[0][0] == 0
    assert_files_under(spark, f"{S3_CATALOG}.{table}", lake.warehouse)
