"""One peer engine's run, as its own process (interop/bench/peerbench.py
starts one at a time and measures it from outside).

  peers.py compact PEER VARIANT --location L --target BYTES
      compacts the table at L the way PEER does and prints one JSON line:
      call_seconds (the compaction call alone, timed here, in the driver),
      rows (the peer's own count of the output) and files (the peer's own
      count of the output's data files).
  peers.py plan-iceberg --warehouse W --table NS.T --windows NAME=F... CATALOG=DB...
  peers.py plan-delta --windows NAME=F... LOCATION...
      Spark's own scan planning with a bbox filter on every window of F
      (a JSON list of {minx, miny, maxx, maxy}), for each output:
      the data files Iceberg's scan planned (its resultDataFiles metric) or
      the files Delta's file index kept after data skipping (the scan's
      numFiles metric), one count per window, as JSON.
  peers.py read-duckdb --windows NAME=F... OUTPUTS
      DuckDB reading each output (OUTPUTS: a JSON file of name -> its data
      files) with the same bbox filter per window: the files whose footer
      statistics meet the window (DuckDB's parquet_metadata), then
      SELECT * over those files with the filter; the byte ranges DuckDB
      reads are recorded by the file system it reads through, and the row
      groups it read are those the ranges touch, as JSON per window.

Peers: spark-iceberg (binpack, sort, zorder, hilbert), spark-delta (zorder)
and delta-rs (compact, zorder). Spark runs in local[2] with a 2 GiB driver.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

CATALOG = "geocompact"  # the catalog_name geocompact's embedded catalog records
BBOX = ("bbox_minx", "bbox_miny", "bbox_maxx", "bbox_maxy")


def _jars(var: str, keep: tuple[str, ...] = ("",)) -> list[str]:
    folder = os.environ.get(var, "")
    jars = sorted(j for j in glob.glob(os.path.join(folder, "*.jar"))
                  if os.path.basename(j).startswith(keep)) if folder else []
    if not jars:
        sys.exit(f"peers.py: {var} names no jar folder: run through interop/bench/run.sh")
    return jars


def _builder(name: str, jars: list[str]):
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName(name)
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraClassPath", ":".join(jars))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
    )


def iceberg_session(warehouse: str, planning: bool = False):
    jars = _jars("GEOCOMPACT_INTEROP_ICEBERG112_JARS" if os.environ.get(
        "GEOCOMPACT_INTEROP_ICEBERG112_JARS") else "GEOCOMPACT_INTEROP_ICEBERG_JARS")
    cat = f"spark.sql.catalog.{CATALOG}"
    b = (
        _builder("geocompact-peerbench-iceberg", jars)
        .config("spark.sql.extensions",
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(cat, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{cat}.type", "jdbc")
        .config(f"{cat}.uri", f"jdbc:sqlite:{warehouse}/catalog.db")
        .config(f"{cat}.jdbc.schema-version", "V1")
        .config(f"{cat}.jdbc.busy_timeout", "30000")
        .config(f"{cat}.warehouse", f"file:{warehouse}")
        .config(f"{cat}.cache-enabled", "false")
    )
    if planning:
        # The plan's leaves are the scans themselves, and a count is
        # planned as a scan, not answered from manifests.
        b = b.config("spark.sql.adaptive.enabled", "false").config(
            "spark.sql.iceberg.aggregate-push-down.enabled", "false")
    s = b.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    return s


def delta_session(target: int | None = None, planning: bool = False):
    # Only Delta's own jars: Spark brings its Hadoop, Parquet, Jackson and
    # Scala, and the copies Maven resolves beside Delta clash with them.
    jars = _jars("GEOCOMPACT_INTEROP_DELTA_JARS", ("delta-spark_", "delta-storage-"))
    b = (
        _builder("geocompact-peerbench-delta", jars)
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.sql.shuffle.partitions", "2")
    )
    if target:
        b = b.config("spark.databricks.delta.optimize.maxFileSize", str(target))
    if planning:
        b = b.config("spark.sql.adaptive.enabled", "false")
    s = b.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    return s


ICEBERG_ORDERS = {
    "sort": "bbox_minx, bbox_miny",
    "zorder": "zorder(bbox_minx, bbox_miny)",
    "hilbert": "hilbert(bbox_minx, bbox_miny)",
}


def spark_iceberg(variant: str, warehouse: str, table: str, target: int) -> dict:
    spark = iceberg_session(warehouse)
    fq = f"{CATALOG}.{table}"
    opts = f"map('target-file-size-bytes', '{target}', 'rewrite-all', 'true')"
    if variant == "binpack":
        call = f"CALL {CATALOG}.system.rewrite_data_files(table => '{table}', options => {opts})"
    else:
        call = (f"CALL {CATALOG}.system.rewrite_data_files(table => '{table}', strategy => 'sort', "
                f"sort_order => '{ICEBERG_ORDERS[variant]}', options => {opts})")
    start = time.monotonic()
    result = spark.sql(call).collect()[0].asDict()
    call_seconds = time.monotonic() - start
    rows = spark.sql(f"SELECT count(*) FROM {fq}").collect()[0][0]
    files = spark.sql(f"SELECT count(*) FROM {fq}.files WHERE content = 0").collect()[0][0]
    spark.stop()
    return {"call_seconds": call_seconds, "rows": int(rows), "files": int(files), "result": result}


def spark_delta(variant: str, location: str, target: int) -> dict:
    if variant != "zorder":
        sys.exit(f"peers.py: spark-delta has no variant {variant}")
    spark = delta_session(target)
    start = time.monotonic()
    spark.sql(f"OPTIMIZE delta.`{location}` ZORDER BY (bbox_minx, bbox_miny)").collect()
    call_seconds = time.monotonic() - start
    rows = spark.sql(f"SELECT count(*) FROM delta.`{location}`").collect()[0][0]
    files = spark.sql(f"DESCRIBE DETAIL delta.`{location}`").collect()[0]["numFiles"]
    spark.stop()
    return {"call_seconds": call_seconds, "rows": int(rows), "files": int(files)}


def delta_rs(variant: str, location: str, target: int) -> dict:
    from deltalake import DeltaTable, QueryBuilder

    dt = DeltaTable(location)
    start = time.monotonic()
    if variant == "compact":
        metrics = dt.optimize.compact(target_size=target)
    elif variant == "zorder":
        metrics = dt.optimize.z_order(["bbox_minx", "bbox_miny"], target_size=target)
    else:
        sys.exit(f"peers.py: delta-rs has no variant {variant}")
    call_seconds = time.monotonic() - start
    dt = DeltaTable(location)
    res = QueryBuilder().register("t", dt).execute("SELECT count(*) AS n FROM t").read_all()
    return {"call_seconds": call_seconds, "rows": int(res.column(0)[0].as_py()),
            "files": len(dt.file_uris()), "result": metrics}


# ---------------------------------------------------------------- planning


def bbox_filter(w: dict) -> str:
    """The same predicate geocompact's bench plans with: the row's bbox
    meets the window (closed intervals)."""
    return (f"bbox_maxx >= {w['minx']!r} AND bbox_minx <= {w['maxx']!r} AND "
            f"bbox_maxy >= {w['miny']!r} AND bbox_miny <= {w['maxy']!r}")


def _scan_leaf(df, kind: str):
    plan = df._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    for i in range(leaves.size()):
        leaf = leaves.apply(i)
        if leaf.nodeName().startswith(kind):
            return leaf
    raise RuntimeError(f"no {kind} in the plan:\n{plan.toString()}")


def _metric(leaf, name: str) -> int:
    # Making the scan's RDD plans it (no job runs) and posts its driver
    # metrics: Iceberg's resultDataFiles, the file scan's numFiles.
    leaf.execute()
    metrics = leaf.metrics()
    if not metrics.contains(name):
        raise RuntimeError(f"the scan reports no {name} metric: {metrics.keys().toString()}")
    return int(metrics.apply(name).value())


def plan_iceberg(warehouse: str, table: str, catalogs: dict[str, str],
                 windows: dict[str, list[dict]]) -> dict:
    """Plans every window on the table of each catalog (name -> SQLite
    file): each is a copy of one output's catalog, its catalog_name
    renamed, over one warehouse holding every output's files."""
    spark = iceberg_session(warehouse, planning=True)
    for name, db in catalogs.items():
        c = f"spark.sql.catalog.{name}"
        for k, v in {c: "org.apache.iceberg.spark.SparkCatalog", f"{c}.type": "jdbc",
                     f"{c}.uri": f"jdbc:sqlite:{db}", f"{c}.jdbc.schema-version": "V1",
                     f"{c}.warehouse": f"file:{warehouse}", f"{c}.cache-enabled": "false"}.items():
            spark.conf.set(k, v)
    out = {}
    for name in catalogs:
        df = spark.table(f"{name}.{table}")
        files = spark.sql(f"SELECT count(*) FROM {name}.{table}.files WHERE content = 0").collect()[0][0]
        out[name] = {area: {"files": int(files), "planned": [
            _metric(_scan_leaf(df.where(bbox_filter(w)).select("id"), "BatchScan"), "resultDataFiles")
            for w in ws]} for area, ws in windows.items()}
    spark.stop()
    return out


def plan_delta(locations: list[str], windows: dict[str, list[dict]]) -> dict:
    spark = delta_session(planning=True)
    out = {}
    for loc in locations:
        df = spark.read.format("delta").load(loc)
        files = spark.sql(f"DESCRIBE DETAIL delta.`{loc}`").collect()[0]["numFiles"]
        out[loc] = {area: {"files": int(files), "planned": [
            _metric(_scan_leaf(df.where(bbox_filter(w)).select("id"), "Scan"), "numFiles")
            for w in ws]} for area, ws in windows.items()}
    spark.stop()
    return out


def _counted_fs():
    """A local file system for DuckDB that records every (path, offset,
    length) DuckDB reads through it: its paths are counted:///abs/path."""
    from fsspec.implementations.local import LocalFileSystem

    class CountedFS(LocalFileSystem):
        protocol = ("counted",)
        reads: list[tuple[str, int, int]] = []

        @classmethod
        def _strip_protocol(cls, path):
            return LocalFileSystem._strip_protocol(str(path).removeprefix("counted://"))

        def _open(self, path, mode="rb", **kw):
            f = super()._open(path, mode, **kw)
            read, readinto, log = f.read, f.readinto, self.reads

            def counted_read(n=-1):
                pos = f.tell()
                b = read(n)
                log.append((path, pos, len(b)))
                return b

            def counted_readinto(buf):
                pos = f.tell()
                k = readinto(buf)
                log.append((path, pos, k))
                return k

            f.read, f.readinto = counted_read, counted_readinto
            return f

    return CountedFS()


def _chunks(con, files: list[str]) -> tuple[dict, dict]:
    """Per file, its bounds from the footer's statistics (the bbox test a
    planner makes) and, per row group, its column chunks' byte ranges."""
    meta = con.execute(
        "SELECT file_name, row_group_id, path_in_schema, stats_min, stats_max, "
        "coalesce(least(dictionary_page_offset, data_page_offset), data_page_offset), "
        "total_compressed_size FROM parquet_metadata(?)", [files]).fetchall()
    bounds: dict[str, dict] = {}
    ranges: dict[str, dict[int, list[tuple[int, int]]]] = {}
    for f, rg, col, lo, hi, off, size in meta:
        ranges.setdefault(f, {}).setdefault(rg, []).append((off, off + size))
        if col in BBOX:
            b = bounds.setdefault(f, {})
            b[col] = (min(float(lo), b.get(col, (float("inf"),))[0]),
                      max(float(hi), b.get(col, (0, float("-inf")))[1]))
    return bounds, ranges


def _meets(b: dict, w: dict) -> bool:
    return (b["bbox_maxx"][1] >= w["minx"] and b["bbox_minx"][0] <= w["maxx"]
            and b["bbox_maxy"][1] >= w["miny"] and b["bbox_miny"][0] <= w["maxy"])


def _groups_read(reads, ranges: dict, sizes: dict) -> int:
    """The row groups a column-chunk range read touched; a read that ends
    at the end of the file is the footer's."""
    touched = set()
    for path, pos, n in reads:
        if n <= 0 or pos + n >= sizes[path]:
            continue
        for rg, spans in ranges[path].items():
            if any(pos < hi and lo < pos + n for lo, hi in spans):
                touched.add((path, rg))
    return len(touched)


def read_duckdb(outputs: dict[str, list[str]], windows: dict[str, list[dict]]) -> dict:
    import duckdb

    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions=false")
    # Every query reads from the files, not from bytes an earlier one cached.
    con.execute("SET enable_external_file_cache=false")
    # The geometry column is read as the bytes it holds: not every peer
    # keeps the GeoParquet metadata that would make DuckDB decode it.
    con.execute("SET enable_geoparquet_conversion=false")
    fs = _counted_fs()
    con.register_filesystem(fs)
    out = {}
    for name, files in outputs.items():
        bounds, ranges = _chunks(con, files)
        sizes = {f: os.path.getsize(f) for f in files}
        out[name] = {}
        for area, ws in windows.items():
            got = out[name][area] = {"files": len(files), "planned": [], "row_groups_planned": [],
                                     "row_groups_read": [], "bytes_read": [], "rows": []}
            for w in ws:
                planned = [f for f in files if _meets(bounds[f], w)]
                fs.reads.clear()
                rows = 0
                if planned:
                    rows = con.execute(f"SELECT * FROM read_parquet(?) WHERE {bbox_filter(w)}",
                                       [[f"counted://{f}" for f in planned]]).to_arrow_table().num_rows
                got["planned"].append(len(planned))
                got["row_groups_planned"].append(sum(len(ranges[f]) for f in planned))
                got["row_groups_read"].append(_groups_read(fs.reads, ranges, sizes))
                got["bytes_read"].append(sum(n for _, _, n in fs.reads))
                got["rows"].append(rows)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["compact", "plan-iceberg", "plan-delta", "read-duckdb"])
    ap.add_argument("args", nargs="*")
    ap.add_argument("--location")
    ap.add_argument("--warehouse")
    ap.add_argument("--table", default="bench.points")
    ap.add_argument("--target", type=int, default=1 << 20)
    ap.add_argument("--windows", action="append", default=[],
                    help="NAME=FILE: a window set (repeatable)")
    a = ap.parse_intermixed_args()
    if a.mode == "compact":
        peer, variant = a.args
        if peer == "spark-iceberg":
            out = spark_iceberg(variant, a.location, a.table, a.target)
        elif peer == "spark-delta":
            out = spark_delta(variant, a.location, a.target)
        elif peer == "delta-rs":
            out = delta_rs(variant, a.location, a.target)
        else:
            sys.exit(f"peers.py: unknown peer {peer}")
    else:
        windows = {}
        for spec in a.windows:
            name, path = spec.split("=", 1)
            with open(path) as f:
                windows[name] = json.load(f)
        if a.mode == "read-duckdb":
            with open(a.args[0]) as f:
                out = read_duckdb(json.load(f), windows)
        elif a.mode == "plan-iceberg":
            out = plan_iceberg(a.warehouse, a.table, dict(x.split("=", 1) for x in a.args), windows)
        else:
            out = plan_delta(a.args, windows)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
