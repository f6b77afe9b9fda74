"""Tables behind an Iceberg REST catalog (the project's test server,
scripts/start-rest.sh, OAuth2 client credentials), both ways: geocompact
(a `rest` catalog in its config file), Spark (RESTCatalog), PyIceberg
(`rest`) and DuckDB (ATTACH ... TYPE iceberg on the REST endpoint) reach
the same tables through the same server, in the server's own warehouse.

geocompact generates and rewrites tables that every peer then reads the
same; a table Spark creates and deletes from is rewritten by geocompact,
read back identical, and Spark deletes from it again afterwards.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from icepeers import current_snapshot, spark_fingerprint
from remote import (
    REST_CATALOG,
    CatalogGc,
    assert_agree,
    assert_files_under,
    duck_s3,
    fresh_namespace,
    peer_figures,
    s3_service,
    service_env,
    set_spark_catalog,
    spark_table,
)
from test_ours_read_by_theirs import generate

ROWS = 20000


@pytest.fixture(scope="session", autouse=True)
def rest_env():
    """The REST server's variables, checked before Spark starts."""
    return service_env(["GEOCOMPACT_TEST_REST_URI", "GEOCOMPACT_TEST_REST_CREDENTIAL"],
                       "scripts/start-rest.sh")


def connect(env, gc, spark, duck, folder, name: str, s3=None, warehouse: str = ""):
    """Every peer's client of the REST server as catalog NAME: the server's
    own warehouse, or (with s3) the s3:// warehouse asked for by name."""
    from pyiceberg.catalog import load_catalog

    uri = env["GEOCOMPACT_TEST_REST_URI"].rstrip("/")
    cred = env["GEOCOMPACT_TEST_REST_CREDENTIAL"]
    tokens = f"{uri}/v1/oauth/tokens"
    spark_props = {"type": "rest", "uri": uri, "credential": cred, "oauth2-server-uri": tokens}
    py_props = {"uri": uri, "credential": cred, "oauth2-server-uri": tokens}
    yaml = ""
    if s3 is not None:
        spark_props.update(warehouse=warehouse, **s3.iceberg_props())
        py_props.update(warehouse=warehouse, **s3.pyiceberg_props())
        yaml = f"    warehouse: {warehouse}\n"
        duck_s3(duck, s3)
    config = folder / "geocompact.yaml"
    # The credential stays in the environment, as a user's secret would.
    config.write_text(
        f"catalogs:\n  {name}:\n    type: rest\n{yaml}    properties:\n"
        f"      uri: {uri}\n"
        "      credential: ${GEOCOMPACT_TEST_REST_CREDENTIAL}\n"
        + (s3.geocompact_props() if s3 is not None else ""))
    set_spark_catalog(spark, name, spark_props)
    py = load_catalog(name, type="rest", **py_props)
    client_id, secret = cred.split(":", 1)
    duck.execute(
        f"ATTACH IF NOT EXISTS '{warehouse}' AS {name}_duck (TYPE iceberg, ENDPOINT '{uri}', "
        f"CLIENT_ID '{client_id}', CLIENT_SECRET '{secret}', OAUTH2_SERVER_URI '{tokens}', "
        "ACCESS_DELEGATION_MODE 'none')")
    return SimpleNamespace(gc=CatalogGc(gc, config, name), py=py, spark=name,
                           duck=f"{name}_duck", warehouse=warehouse)


@pytest.fixture(scope="module")
def rest(rest_env, gc, spark, duck, tmp_path_factory):
    """The REST server, in its own warehouse, as each peer reaches it."""
    return connect(rest_env, gc, spark, duck, tmp_path_factory.mktemp("rest"), REST_CATALOG)


@pytest.fixture(scope="module")
def rest_s3(rest_env, gc, spark, duck, tmp_path_factory):
    """The same REST server asked for an s3:// warehouse on the loopback S3
    server: the server opens a catalog of its own for it, and every peer
    reads and writes the data files on S3."""
    s3 = s3_service()
    return connect(rest_env, gc, spark, duck, tmp_path_factory.mktemp("rest-s3"), "rest_s3",
                   s3=s3, warehouse=s3.warehouse(fresh_namespace("rest")))


def figures(spark, duck, rest, table):
    return peer_figures(spark, rest.spark, rest.py, duck, f"{rest.duck}.{table}", table)


def rewrite(rest, table, curve):
    res = rest.gc.run("rewrite", "--table", table, "--curve", curve, "--allow-layout-change",
                      "--option", "rewrite-all=true", "--option", "target-file-size-bytes=200000")
    assert res["verified"], res
    assert res["added_data_files_count"] > 0, res
    return res


@pytest.mark.parametrize("version,partition", [
    pytest.param(2, "day(ts)", id="v2-day"),
    pytest.param(3, "", id="v3"),
])
def test_rest_rewrites_read_the_same(spark, duck, rest, version, partition):
    table = f"{fresh_namespace('rest')}.pings"
    generate(rest.gc, table, version, partition, rows=ROWS)
    before = figures(spark, duck, rest, table)
    assert_agree(before, ROWS)

    for curve in ["hilbert", "kd"]:
        snap = current_snapshot(spark, table, catalog=REST_CATALOG)
        res = rewrite(rest, table, curve)
        assert sum(g["records"] for g in res["plan"]["groups"]) == ROWS
        after = figures(spark, duck, rest, table)
        assert after == before, f"after {curve}: {after} != {before}"
        assert current_snapshot(spark, table, catalog=REST_CATALOG) != snap
        assert spark_fingerprint(spark, table, snapshot_id=snap, catalog=REST_CATALOG) \
            == before["spark"]


def test_rest_over_s3_rewrite_reads_the_same(spark, duck, rest_s3):
    table = f"{fresh_namespace('rest')}.pings"
    generate(rest_s3.gc, table, 2, "day(ts)", rows=ROWS)
    before = figures(spark, duck, rest_s3, table)
    assert_agree(before, ROWS)
    snap = current_snapshot(spark, table, catalog=rest_s3.spark)
    rewrite(rest_s3, table, "hilbert")
    assert figures(spark, duck, rest_s3, table) == before
    assert spark_fingerprint(spark, table, snapshot_id=snap, catalog=rest_s3.spark) \
        == before["spark"]
    assert_files_under(spark, f"{rest_s3.spark}.{table}", rest_s3.warehouse)


@pytest.mark.parametrize("where", ["rest", "rest_s3"])
def test_spark_rest_table_compacted_and_deleted_from_again(spark, duck, where, request):
    """Spark creates a merge-on-read table through the REST server (in its
    own warehouse, or on S3 through S3FileIO) and deletes from it;
    geocompact compacts it; Spark deletes from it again."""
    rest = request.getfixturevalue(where)
    table = f"{fresh_namespace('rest')}.spark_deletes"
    fq = f"{rest.spark}.{table}"
    spark_table(spark, rest.spark, table, 2, ROWS)
    spark.sql(f"DELETE FROM {fq} WHERE id % 5 = 0")
    assert spark.sql(f"SELECT count(*) FROM {fq}.delete_files").collect()[0][0] > 0
    before = figures(spark, duck, rest, table)
    assert_agree(before, ROWS - ROWS // 5)
    snap = current_snapshot(spark, table, catalog=rest.spark)

    assert rest.gc.run("validate", "--table", table) is not None
    res = rewrite(rest, table, "hilbert")
    assert res["removed_delete_files_count"] > 0, res
    assert figures(spark, duck, rest, table) == before
    assert spark_fingerprint(spark, table, snapshot_id=snap, catalog=rest.spark) \
        == before["spark"]
    assert spark.sql(f"SELECT count(*) FROM {fq}.delete_files").collect()[0][0] == 0
    if rest.warehouse:
        assert_files_under(spark, fq, rest.warehouse)

    # Spark deletes from the rewritten table through the same catalog.
    keep = spark.sql(f"SELECT count(*) FROM {fq} WHERE id % 7 <> 0").collect()[0][0]
    assert 0 < keep < before["spark"].rows
    spark.sql(f"DELETE FROM {fq} WHERE id % 7 = 0")
    again = figures(spark, duck, rest, table)
    assert_agree(again, keep)
    assert spark.sql(f"SELECT count(*) FROM {fq} WHERE id % 5 = 0 OR id % 7 = 0").collect()[0][0] == 0
