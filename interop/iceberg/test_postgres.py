"""The same round trip on the PostgreSQL SQL catalog: geocompact, Spark's
JdbcCatalog and PyIceberg's SqlCatalog open one PostgreSQL database; a
table geocompact generates and rewrites reads the same in Spark and
PyIceberg before and after, and Spark's time travel reads the old rows."""

from __future__ import annotations

import os
import uuid

import pytest

from icepeers import PG_CATALOG, postgres


@pytest.fixture
def pg(gc, warehouse, tmp_path):
    server = postgres()
    if server is None:
        if os.environ.get("CI"):
            pytest.fail("GEOCOMPACT_TEST_POSTGRES_URI is not set (scripts/start-postgres.sh)")
        pytest.skip("GEOCOMPACT_TEST_POSTGRES_URI is not set (scripts/start-postgres.sh)")
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
