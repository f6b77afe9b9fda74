"""The same round trip on the PostgreSQL SQL catalog: geocompact, Spark's
JdbcCatalog and PyIceberg's SqlCatalog open one PostgreSQL database; a
table geocompact generates and rewrites reads the same in Spark and
PyIceberg before and after, and Spark's time travel reads the old rows.

The same database with an s3:// warehouse on the loopback S3 server
(scripts/start-s3.sh), both ways: a table geocompact generates and
rewrites, and a merge-on-read table Spark writes and deletes from, which
geocompact compacts; Spark, PyIceberg and DuckDB read each the same."""

from __future__ import annotations

import os
import uuid
from types import SimpleNamespace

import pytest

from icepeers import PG_CATALOG, current_snapshot, postgres, spark_fingerprint
from remote import (
    CatalogGc,
    assert_agree,
    assert_files_under,
    duck_s3,
    fresh_namespace,
    peer_figures,
    s3_service,
    set_spark_catalog,
    spark_table,
)
from test_ours_read_by_theirs import generate

# The SQL catalog's rows carry the name of the catalog that wrote them: the
# S3 warehouse's catalog is named alike in geocompact's config, Spark and
# PyIceberg.
PG_S3_CATALOG = "pg_s3"
ROWS = 20000


def server_or_skip() -> dict:
    server = postgres()
    if server is None:
        if os.environ.get("CI"):
            pytest.fail("GEOCOMPACT_TEST_POSTGRES_URI is not set (scripts/start-postgres.sh)")
        pytest.skip("GEOCOMPACT_TEST_POSTGRES_URI is not set (scripts/start-postgres.sh)")
    return server


@pytest.fixture
def pg(gc, warehouse, tmp_path):
    server = server_or_skip()
    wh = warehouse.parent / "pg-warehouse"
    wh.mkdir(exist_ok=True)
    config = tmp_path / "geocompact.yaml"
    config.write_text(
        "catalogs:\n"
        f"  {PG_CATALOG}:\n"
        "    type: sql\n"
        f"    warehouse: file://{wh}\n"
        "    properties:\n"
        f"      uri: {server['uri']}\n"
        "      sql.dialect: postgres\n")
    return server, ["--config", str(config), "--catalog", PG_CATALOG]


def test_postgres_catalog_round_trip(gc, spark, pg):
    from pyiceberg.catalog.sql import SqlCatalog

    server, flags = pg
    ns = "interop_" + uuid.uuid4().hex[:8]  # the database outlives the run
    table = f"{ns}.pings"
    fq = f"{PG_CATALOG}.{table}"
    res = gc.run(*flags, "generate", "--table", table, "--rows", "20000", "--commits", "10",
                 "--distribution", "clustered", "--partition-by", "day(ts)")
    assert res["rows"] == 20000
    q = (f"SELECT count(*) n, sum(cast(xxhash64(id, ts, device_id, geometry) AS decimal(38,0))) h "
         f"FROM {fq}")
    before = spark.sql(q).collect()[0]
    assert before.n == 20000
    py = SqlCatalog(PG_CATALOG, uri=server["sqlalchemy"])
    assert py.load_table(table).scan().to_arrow().num_rows == 20000
    snap = spark.sql(f"SELECT snapshot_id FROM {fq}.snapshots ORDER BY committed_at DESC LIMIT 1"
                     ).collect()[0][0]

    out = gc.run(*flags, "rewrite", "--table", table, "--curve", "hilbert",
                 "--option", "rewrite-all=true")
    assert out["verified"] and out["added_data_files_count"] > 0

    assert spark.sql(q).collect()[0] == before
    assert spark.sql(q.replace(fq, f"{fq} VERSION AS OF {snap}")).collect()[0] == before
    arrow = py.load_table(table).scan().to_arrow()
    assert arrow.num_rows == 20000
    assert sum(arrow.column("id").to_pylist()) == spark.sql(f"SELECT sum(id) FROM {fq}").collect()[0][0]


@pytest.fixture
def pg_s3(gc, spark, duck, tmp_path):
    """The PostgreSQL catalog over a fresh prefix of the S3 bucket, as each
    peer reaches it."""
    from pyiceberg.catalog.sql import SqlCatalog

    server = server_or_skip()
    s3 = s3_service()
    wh = s3.warehouse(fresh_namespace("pg"))
    config = tmp_path / "geocompact.yaml"
    config.write_text(
        "catalogs:\n"
        f"  {PG_S3_CATALOG}:\n"
        "    type: sql\n"
        f"    warehouse: {wh}\n"
        "    properties:\n"
        f"      uri: {server['uri']}\n"
        "      sql.dialect: postgres\n" + s3.geocompact_props())
    set_spark_catalog(spark, PG_S3_CATALOG, {
        "type": "jdbc", "uri": server["jdbc"], "jdbc.user": server["user"],
        "jdbc.password": server["password"], "jdbc.schema-version": "V1",
        "warehouse": wh, **s3.iceberg_props()})
    py = SqlCatalog(PG_S3_CATALOG, uri=server["sqlalchemy"], warehouse=wh, **s3.pyiceberg_props())
    duck_s3(duck, s3)
    return SimpleNamespace(gc=CatalogGc(gc, config, PG_S3_CATALOG), py=py, warehouse=wh)


def s3_figures(spark, duck, lake, table):
    meta = lake.py.load_table(table).metadata_location
    assert meta.startswith(lake.warehouse + "/"), meta
    return peer_figures(spark, PG_S3_CATALOG, lake.py, duck, f"iceberg_scan('{meta}')", table)


def s3_rewrite(lake, table):
    res = lake.gc.run("rewrite", "--table", table, "--curve", "hilbert", "--allow-layout-change",
                      "--option", "rewrite-all=true", "--option", "target-file-size-bytes=200000")
    assert res["verified"] and res["added_data_files_count"] > 0, res
    return res


def test_postgres_catalog_over_s3_both_ways(spark, duck, pg_s3):
    ns = fresh_namespace("pg")  # the database and the bucket outlive the run

    # Ours, read by theirs.
    table = f"{ns}.pings"
    generate(pg_s3.gc, table, 2, "day(ts)", rows=ROWS)
    before = s3_figures(spark, duck, pg_s3, table)
    assert_agree(before, ROWS)
    snap = current_snapshot(spark, table, catalog=PG_S3_CATALOG)
    s3_rewrite(pg_s3, table)
    assert s3_figures(spark, duck, pg_s3, table) == before
    assert spark_fingerprint(spark, table, snapshot_id=snap, catalog=PG_S3_CATALOG) == before["spark"]
    assert_files_under(spark, f"{PG_S3_CATALOG}.{table}", pg_s3.warehouse)

    # Theirs, compacted by ours.
    table = f"{ns}.spark_deletes"
    fq = f"{PG_S3_CATALOG}.{table}"
    spark_table(spark, PG_S3_CATALOG, table, 2, ROWS)
    spark.sql(f"DELETE FROM {fq} WHERE id % 5 = 0")
    assert spark.sql(f"SELECT count(*) FROM {fq}.delete_files").collect()[0][0] > 0
    before = s3_figures(spark, duck, pg_s3, table)
    assert_agree(before, ROWS - ROWS // 5)
    res = s3_rewrite(pg_s3, table)
    assert res["removed_delete_files_count"] > 0, res
    assert s3_figures(spark, duck, pg_s3, table) == before
    assert spark.sql(f"SELECT count(*) FROM {fq}.delete_files").collect()[0][0] == 0
    assert_files_under(spark, f"{PG_S3_CATALOG}.{table}", pg_s3.warehouse)
