"""Catalogs and storage beyond the local warehouse, for test_s3.py and
test_rest.py: the loopback S3 server of scripts/start-s3.sh and the test
REST catalog of scripts/start-rest.sh, each reached by geocompact (a
catalog in a config file), Spark (a catalog of the shared session),
PyIceberg and DuckDB.

A service whose variables are missing fails its tests under CI=true and
skips them otherwise, naming the script that starts it.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from icepeers import Fingerprint, duck_source_fingerprint, pyiceberg_fingerprint, spark_fingerprint
from test_theirs_compacted_by_ours import GEOMETRY_PROP, SPARK_COLUMNS, points

# Spark's and geocompact's names for the two catalogs. A SQL catalog's
# rows carry the name of the catalog that wrote them, so Spark's JDBC
# catalog over the S3 warehouse's catalog file must be named as
# geocompact's config names it.
S3_CATALOG = "s3lake"
REST_CATALOG = "rest"

S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"


def service_env(names: list[str], script: str) -> dict[str, str]:
    """The values of names, all set by script; a missing one fails the test
    under CI=true and skips it otherwise."""
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        why = (f"{', '.join(missing)} not set: start the service with `. {script}` "
               "(or run interop/run.sh --services)")
        if os.environ.get("CI"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    return {n: os.environ[n] for n in names}


class CatalogGc:
    """geocompact on one catalog of a config file: every command gets
    --config FILE --catalog NAME."""

    def __init__(self, gc, config: Path, name: str):
        self.gc = gc
        self.binary = gc.binary
        self.warehouse = gc.warehouse
        self.flags = ["--config", str(config), "--catalog", name]

    def run(self, *args: str, **kw):
        return self.gc.run(*self.flags, *args, **kw)


@dataclass(frozen=True)
class S3:
    endpoint: str  # http://127.0.0.1:PORT
    bucket: str
    key_id: str
    secret: str
    region: str

    def warehouse(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"

    def iceberg_props(self) -> dict[str, str]:
        """S3FileIO's properties (Spark and any Iceberg Java catalog)."""
        return {"io-impl": S3_FILE_IO, "s3.endpoint": self.endpoint,
                "s3.path-style-access": "true", "s3.access-key-id": self.key_id,
                "s3.secret-access-key": self.secret, "client.region": self.region}

    def pyiceberg_props(self) -> dict[str, str]:
        """PyIceberg's properties, through pyarrow's S3 file system."""
        return {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO", "s3.endpoint": self.endpoint,
                "s3.access-key-id": self.key_id, "s3.secret-access-key": self.secret,
                "s3.region": self.region, "s3.force-virtual-addressing": "false"}

    def geocompact_props(self) -> str:
        """The config file's s3.* lines (the key pair comes from the
        environment, as a user's would)."""
        return (f"      s3.endpoint: {self.endpoint}\n"
                f"      s3.region: {self.region}\n"
                "      s3.force-virtual-addressing: \"false\"\n")


def s3_service() -> S3:
    env = service_env(["GEOCOMPACT_TEST_S3_ENDPOINT", "GEOCOMPACT_TEST_S3_BUCKET",
                       "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"], "scripts/start-s3.sh")
    return S3(env["GEOCOMPACT_TEST_S3_ENDPOINT"], env["GEOCOMPACT_TEST_S3_BUCKET"],
              env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"],
              os.environ.get("AWS_REGION") or "us-east-1")


def duck_s3(duck, s3: S3) -> None:
    """DuckDB reaches the S3 server through httpfs (the duck fixture loads
    it from the duckdb-extension-httpfs wheel: nothing is downloaded)."""
    host = s3.endpoint.split("://", 1)[1]
    duck.execute(
        f"CREATE OR REPLACE SECRET interop_s3 (TYPE s3, KEY_ID '{s3.key_id}', "
        f"SECRET '{s3.secret}', REGION '{s3.region}', ENDPOINT '{host}', "
        f"URL_STYLE 'path', USE_SSL {str(s3.endpoint.startswith('https')).lower()})")


def set_spark_catalog(spark, name: str, props: dict[str, str]) -> None:
    """Configures Spark catalog NAME (catalogs load on first use, so this
    works on the running session)."""
    p = f"spark.sql.catalog.{name}"
    spark.conf.set(p, "org.apache.iceberg.spark.SparkCatalog")
    # geocompact commits between Spark's statements: never serve a cached
    # table.
    spark.conf.set(f"{p}.cache-enabled", "false")
    for k, v in props.items():
        spark.conf.set(f"{p}.{k}", v)


def sql_metadata_location(catalog_db: Path, catalog: str, table: str) -> str:
    ns, name = table.split(".")
    with sqlite3.connect(catalog_db, timeout=30) as db:
        row = db.execute(
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE catalog_name=? AND table_namespace=? AND table_name=?",
            (catalog, ns, name)).fetchone()
    assert row, f"{table} is not in {catalog_db}"
    return row[0]


def fresh_namespace(prefix: str) -> str:
    """A namespace no earlier run used (the S3 server and the REST catalog
    may outlive a run)."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def spark_table(spark, catalog: str, table: str, version: int, rows: int, batches: int = 8) -> None:
    """A merge-on-read table Spark creates and appends to in batches (rows
    a multiple of batches)."""
    assert rows % batches == 0, (rows, batches)
    fq = f"{catalog}.{table}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.{table.split('.')[0]}")
    props = {"format-version": str(version), "write.delete.mode": "merge-on-read",
             "write.update.mode": "merge-on-read", GEOMETRY_PROP: "geometry"}
    spark.sql(f"CREATE TABLE {fq} ({SPARK_COLUMNS}) USING iceberg TBLPROPERTIES ("
              + ", ".join(f"'{k}'='{v}'" for k, v in props.items()) + ")")
    per = rows // batches
    for b in range(batches):
        df = spark.createDataFrame(points(per, seed=b, start_id=b * per), schema=SPARK_COLUMNS)
        df.coalesce(1).writeTo(fq).append()


def peer_figures(spark, catalog: str, py_catalog, duck, duck_src: str, table: str
                 ) -> dict[str, Fingerprint]:
    """Each peer's own fingerprint of NS.T."""
    return {
        "spark": spark_fingerprint(spark, table, catalog=catalog),
        "pyiceberg": pyiceberg_fingerprint(py_catalog, table),
        "duckdb": duck_source_fingerprint(duck, duck_src),
    }


def assert_agree(figures: dict[str, Fingerprint], rows: int) -> None:
    """The peers read the same rows: count, id sum and geometry checksum
    (where the peer reads the geometry) equal, and the count is rows."""
    shared = {peer: f.shared() for peer, f in figures.items()}
    assert len({(n, i) for n, _, i in shared.values()}) == 1, f"peers disagree: {shared}"
    assert len({g for _, g, _ in shared.values() if g is not None}) == 1, \
        f"peers read different geometries: {shared}"
    for peer, f in figures.items():
        assert f.rows == rows, f"{peer} reads {f.rows} rows, want {rows}"


def assert_files_under(spark, fq_table: str, warehouse: str) -> None:
    """Spark's files table lists every live file of fq_table (catalog.ns.name)
    under warehouse."""
    paths = [r[0] for r in spark.sql(f"SELECT file_path FROM {fq_table}.files").collect()]
    assert paths and all(p.startswith(warehouse + "/") for p in paths), paths[:3]
