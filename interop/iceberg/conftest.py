"""Fixtures of the Iceberg half of the interop suite.

One warehouse per pytest run, shared by every peer through one SQL catalog
database (catalog.db): geocompact's embedded catalog writes it, and Spark's
JdbcCatalog, PyIceberg's SqlCatalog and DuckDB (through the metadata files
the catalog points at) read the very same rows. Each test uses its own
namespace, so tests never see each other's tables.

One in-process SparkSession serves the whole run (local[2], small memory);
it is stopped when the run ends.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

import pytest

from icepeers import CATALOG, PG_CATALOG, postgres


def _shared_fixtures():
    """interop/conftest.py, loaded under its own name (both files are
    called conftest.py, so a plain import would find this one)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "conftest.py"
    spec = importlib.util.spec_from_file_location("interop_shared_conftest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_shared = _shared_fixtures()
Geocompact = _shared.Geocompact
GeocompactError = _shared.GeocompactError
# Also when pytest is run in this folder alone (interop/conftest.py is then
# outside its conftest path).
geocompact_bin = _shared.geocompact_bin


def _required_env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        pytest.fail(f"{name} is not set: run the suite through interop/run.sh "
                    f'or eval "$(interop/setup.sh)" first', pytrace=False)
    return value


def iceberg_jars() -> list[str]:
    """The Iceberg Spark runtime and JDBC drivers: 1.12 where it resolved
    (it reads geometry columns), else 1.11."""
    folder = os.environ.get("GEOCOMPACT_INTEROP_ICEBERG112_JARS") or _required_env(
        "GEOCOMPACT_INTEROP_ICEBERG_JARS")
    jars = sorted(glob.glob(os.path.join(folder, "*.jar")))
    if not any("iceberg-spark-runtime" in j for j in jars):
        pytest.fail(f"no iceberg-spark-runtime jar in {folder}", pytrace=False)
    return jars


def iceberg_version() -> str:
    for j in iceberg_jars():
        m = re.search(r"iceberg-spark-runtime-[0-9.]+_[0-9.]+-([0-9.]+)\.jar$", j)
        if m:
            return m.group(1)
    return "unknown"


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("iceberg") / "warehouse"


@pytest.fixture(scope="session")
def gc(geocompact_bin, warehouse) -> Geocompact:
    g = Geocompact(geocompact_bin, warehouse)
    # The embedded catalog creates catalog.db (in WAL mode) on first use;
    # the peers open it after that.
    g.run("tables")
    assert (warehouse / "catalog.db").exists()
    return g


@pytest.fixture(scope="session")
def catalog_db(gc, warehouse) -> Path:
    return warehouse / "catalog.db"


@pytest.fixture(scope="session")
def spark(gc, warehouse, catalog_db):
    from pyspark.sql import SparkSession

    jars = iceberg_jars()
    cat = f"spark.sql.catalog.{CATALOG}"
    session = (
        SparkSession.builder.master("local[2]")
        .appName("geocompact-interop-iceberg")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraClassPath", ":".join(jars))
        .config("spark.executor.extraClassPath", ":".join(jars))
        .config("spark.sql.extensions",
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(cat, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{cat}.type", "jdbc")
        .config(f"{cat}.uri", f"jdbc:sqlite:{catalog_db}")
        .config(f"{cat}.jdbc.schema-version", "V1")
        # SQLite allows one writer at a time: wait for geocompact's commit
        # instead of failing (the driver's default is 3 s).
        .config(f"{cat}.jdbc.busy_timeout", "30000")
        .config(f"{cat}.warehouse", f"file:{warehouse}")
        # geocompact commits between Spark's statements: never serve a
        # cached table.
        .config(f"{cat}.cache-enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # Iceberg v3 geometry columns read as Spark GEOMETRY.
        .config("spark.sql.geospatial.enabled", "true")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    pg = postgres()
    if pg:
        # A second catalog over the PostgreSQL SQL catalog (test_postgres.py);
        # catalogs load lazily, so it is configured before first use.
        p = f"spark.sql.catalog.{PG_CATALOG}"
        for k, v in {p: "org.apache.iceberg.spark.SparkCatalog", f"{p}.type": "jdbc",
                     f"{p}.uri": pg["jdbc"], f"{p}.jdbc.user": pg["user"],
                     f"{p}.jdbc.password": pg["password"], f"{p}.jdbc.schema-version": "V1",
                     f"{p}.warehouse": f"file:{warehouse.parent / 'pg-warehouse'}",
                     f"{p}.cache-enabled": "false"}.items():
            session.conf.set(k, v)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def pyiceberg_catalog(gc, warehouse, catalog_db):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(CATALOG, uri=f"sqlite:///{catalog_db}", warehouse=f"file://{warehouse}")


def duckdb_extension_file(name: str) -> str:
    """The extension file the duckdb-extension-NAME wheel carries (the
    wheel has no loader of its own: DuckDB loads the file by path)."""
    import importlib

    import duckdb

    pkg = importlib.import_module(f"duckdb_extension_{name}")
    folder = Path(pkg.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    path = folder / f"{name}.duckdb_extension"
    if not path.exists():
        pytest.fail(f"{path} is missing: duckdb-extension-{name} must match duckdb {duckdb.__version__}",
                    pytrace=False)
    return str(path)


@pytest.fixture(scope="session")
def duck():
    import duckdb

    con = duckdb.connect()
    # Nothing is downloaded at run time: the extensions come from the wheels.
    con.execute("SET autoinstall_known_extensions=false")
    con.execute("SET autoload_known_extensions=false")
    # httpfs: s3:// warehouses and REST catalogs (test_s3.py, test_rest.py).
    for ext in ("avro", "iceberg", "spatial", "httpfs"):
        con.execute(f"LOAD '{duckdb_extension_file(ext)}'")
    con.execute("SET TimeZone='UTC'")
    # geocompact's data files carry GeoParquet `geo` metadata; DuckDB's
    # Parquet reader then reads the column as GEOMETRY, and iceberg_scan
    # fails to cast it back to the table's binary column
    # ("Unimplemented type for cast (GEOMETRY('OGC:CRS84') -> BLOB)").
    # docs/interop.md lists this; the table's own schema is what counts.
    con.execute("SET enable_geoparquet_conversion=false")
    yield con
    con.close()


_ns_counter = [0]


@pytest.fixture
def ns(request) -> str:
    """A fresh namespace for one test, free of dots."""
    _ns_counter[0] += 1
    base = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower()).strip("_")[:40]
    return f"t{_ns_counter[0]}_{base}"
