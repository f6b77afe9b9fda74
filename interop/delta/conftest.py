"""Delta peers for the interop suite: one Spark session with Delta Lake per
pytest process, delta-rs and DuckDB's delta extension, and the data every
test writes.

Every peer reads a table with the same SQL and returns the same figures, so a
table read by delta-rs, Spark and DuckDB must give equal ones, and a rewrite
must leave them unchanged. The figures are computed by the peer, never by
geocompact: the row count, sums over the id, a figure that ties each row's id
to its coordinates and name (so a row whose columns were mixed up with
another's changes it), and the total length of the geometries."""

from __future__ import annotations

import glob
import json
import os
import pathlib
import struct
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

# The peers' own SQL dialects all take this text: Spark SQL, DuckDB and
# delta-rs's DataFusion. {t} is the table, {id}/{name}/{x}/{y}/{geom} the
# columns (a renamed column is read by its new name).
CHECKSUM_SQL = """
SELECT count(*) AS n,
       sum({id}) AS id_sum,
       sum(({id} * 7919 + CAST(floor(({x} + 180) * 1000) AS BIGINT)
            + CAST(floor(({y} + 90) * 1000) AS BIGINT) * 31
            + length({name}) * 1000003) % 1000000007) AS row_sum,
       sum(CAST(floor(({x} + 180) * 1000000) AS BIGINT)) AS x_sum,
       sum(CAST(floor(({y} + 90) * 1000000) AS BIGINT)) AS y_sum,
       sum(length({geomhex})) / 2 AS geom_bytes
FROM {t}
"""

DEFAULT_COLS = {"id": "id", "name": "name", "x": "bbox_minx", "y": "bbox_miny", "geom": "geometry"}


def checksum_sql(table: str, cols: dict | None = None, geomhex: str = "hex({geom})") -> str:
    """The figures' query; geomhex is the peer's spelling of a binary
    value's hex text (DataFusion's length would read binary as UTF-8)."""
    c = {**DEFAULT_COLS, **(cols or {})}
    return CHECKSUM_SQL.format(t=table, geomhex=geomhex.format(**c), **c)


@dataclass(frozen=True)
class Figures:
    """What a peer computed over a table's rows."""

    n: int
    id_sum: int
    row_sum: int
    x_sum: int
    y_sum: int
    geom_bytes: int

    @classmethod
    def of(cls, row) -> "Figures":
        return cls(*[int(v) if v is not None else 0 for v in row])


# ---------------------------------------------------------------- data


def wkb_point(x: float, y: float) -> bytes:
    return struct.pack("<BIdd", 1, 1, x, y)


def points(start: int, count: int, *, region: str | None = None, seed: int = 0) -> pa.Table:
    """count rows with ids from start: a WKB point geometry, its bbox
    columns, a name and a timestamp. Coordinates are clustered around a few
    centres so curves have something to cluster."""
    import random

    rnd = random.Random(start * 7 + seed)
    centres = [(-74.0, 40.7), (2.35, 48.85), (139.7, 35.7), (-43.2, -22.9)]
    ids, names, xs, ys, geoms, ts, regions = [], [], [], [], [], [], []
    for i in range(start, start + count):
        cx, cy = centres[rnd.randrange(len(centres))]
        x = round(cx + rnd.gauss(0, 2.0), 6)
        y = round(cy + rnd.gauss(0, 2.0), 6)
        ids.append(i)
        names.append(f"p{i % 97}-{'x' * (i % 5)}")
        xs.append(x)
        ys.append(y)
        geoms.append(wkb_point(x, y))
        ts.append(1_767_225_600_000_000 + i * 1_000_000)
        regions.append(region or ("east" if x >= 0 else "west"))
    cols = {
        "id": pa.array(ids, pa.int64()),
        "name": pa.array(names, pa.string()),
        "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "region": pa.array(regions, pa.string()),
        "geometry": pa.array(geoms, pa.binary()),
        "bbox_minx": pa.array(xs, pa.float64()),
        "bbox_miny": pa.array(ys, pa.float64()),
        "bbox_maxx": pa.array(xs, pa.float64()),
        "bbox_maxy": pa.array(ys, pa.float64()),
    }
    return pa.table(cols)


GEO_META = {
    "version": "1.1.0",
    "primary_column": "geometry",
    "columns": {
        "geometry": {
            "encoding": "WKB",
            "geometry_types": ["Point"],
            "covering": {
                "bbox": {
                    "xmin": ["bbox_minx"],
                    "ymin": ["bbox_miny"],
                    "xmax": ["bbox_maxx"],
                    "ymax": ["bbox_maxy"],
                }
            },
        }
    },
}


def write_geoparquet(path: pathlib.Path, table: pa.Table) -> pathlib.Path:
    meta = dict(table.schema.metadata or {})
    meta[b"geo"] = json.dumps(GEO_META).encode()
    pq.write_table(table.replace_schema_metadata(meta), path)
    return path


def geoparquet_batches(folder: pathlib.Path, batches: int, rows: int, start: int = 0) -> list[pathlib.Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [
        write_geoparquet(folder / f"part-{start + b * rows:08d}.parquet", points(start + b * rows, rows))
        for b in range(batches)
    ]


# ---------------------------------------------------------------- the log


def log_versions(table: pathlib.Path) -> list[int]:
    return sorted(int(p.name.split(".")[0]) for p in (table / "_delta_log").glob("*.json") if p.name[0].isdigit())


def data_files(table: pathlib.Path) -> set[str]:
    return {
        str(p.relative_to(table))
        for p in table.rglob("*.parquet")
        if "_delta_log" not in p.parts
    }


def commit_actions(table: pathlib.Path, version: int) -> list[dict]:
    text = (table / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def tree_state(table: pathlib.Path) -> dict[str, float]:
    """Every file under the table with its modification time: what a refused
    command must leave exactly as it was."""
    return {
        str(p.relative_to(table)): p.stat().st_mtime_ns
        for p in table.rglob("*")
        if p.is_file()
    }


# ---------------------------------------------------------------- peers


def delta_rs_figures(table: pathlib.Path, cols: dict | None = None, version: int | None = None) -> Figures:
    from deltalake import DeltaTable, QueryBuilder

    dt = DeltaTable(str(table), version=version)
    res = QueryBuilder().register("t", dt).execute(checksum_sql("t", cols, "encode({geom}, 'hex')")).read_all()
    return Figures.of([res.column(i)[0].as_py() for i in range(res.num_columns)])


_duck = None


def duckdb_connection():
    global _duck
    if _duck is None:
        import duckdb
        import duckdb_extension_delta

        ext = glob.glob(os.path.join(os.path.dirname(duckdb_extension_delta.__file__), "extensions", "*", "delta.duckdb_extension"))
        assert ext, "duckdb-extension-delta carries no delta.duckdb_extension"
        con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
        con.execute(f"LOAD '{ext[0]}'")
        # Read GeoParquet's WKB as the bytes it is, as the other peers do.
        con.execute("SET enable_geoparquet_conversion = false")
        _duck = con
    return _duck


def duckdb_figures(table: pathlib.Path, cols: dict | None = None) -> Figures:
    con = duckdb_connection()
    row = con.execute(checksum_sql(f"delta_scan('{table}')", cols)).fetchone()
    return Figures.of(row)


def parquet_figures(files: list[pathlib.Path]) -> Figures:
    """The source rows, read by DuckDB straight from the Parquet files."""
    con = duckdb_connection()
    lst = ", ".join(f"'{f}'" for f in files)
    return Figures.of(con.execute(checksum_sql(f"read_parquet([{lst}])")).fetchone())


def spark_figures(spark, table: pathlib.Path, cols: dict | None = None, version: int | None = None) -> Figures:
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    reader.load(str(table)).createOrReplaceTempView("t_figures")
    return Figures.of(spark.sql(checksum_sql("t_figures", cols)).collect()[0])


def all_figures(spark, table: pathlib.Path, cols: dict | None = None) -> dict[str, Figures]:
    return {
        "delta-rs": delta_rs_figures(table, cols),
        "spark": spark_figures(spark, table, cols),
        "duckdb": duckdb_figures(table, cols),
    }


def assert_all_equal(figs: dict[str, Figures], want: Figures):
    for peer, got in figs.items():
        assert got == want, f"{peer} read {got}, want {want}"


# ---------------------------------------------------------------- Spark


def delta_jars() -> list[str]:
    folder = os.environ.get("GEOCOMPACT_INTEROP_DELTA_JARS", "")
    if not folder or not os.path.isdir(folder):
        pytest.fail('GEOCOMPACT_INTEROP_DELTA_JARS is not set: run eval "$(interop/setup.sh)" first')
    # Only Delta's own jars: Spark brings its Hadoop, Parquet, Jackson and
    # Scala, and the copies Maven resolves beside Delta would clash with them.
    keep = ("delta-spark_", "delta-storage-")
    jars = sorted(str(p) for p in pathlib.Path(folder).glob("*.jar") if p.name.startswith(keep))
    assert len(jars) == 2, f"Delta jars not found in {folder}: {jars}"
    return jars


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    jars = ",".join(delta_jars())
    scratch = tmp_path_factory.mktemp("spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("geocompact-interop-delta")
        .config("spark.jars", jars)
        .config("spark.driver.extraClassPath", jars.replace(",", ":"))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        # VACUUM lists the table with this many tasks (default 10000).
        .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
