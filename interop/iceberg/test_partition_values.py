"""Partition values that mean something in a path or a URI ("a/b",
"x/../../OUT", "%", "a b", "Zürich", the empty string, null), in tables
geocompact writes and tables Spark writes.

Iceberg names a partition directory by the value form-encoded, and Java,
PyIceberg and DuckDB take a location literally: the directory is named
"region=a%2Fb". geocompact must write its files so (inside the table) and
find the files Spark wrote so.
"""

from __future__ import annotations

import struct

import pytest

from icepeers import CATALOG, spark_fingerprint

VALUES = ["a/b", "x/../../../OUT", "..", "%", "%2F", ":", "+", "a b", "Zürich", "", None, "plain"]


def rows(n: int, start_id: int = 0):
    out = []
    for i in range(n):
        x, y = (i % 50) - 25.0, (i % 17) - 8.0
        out.append({"id": start_id + i, "region": VALUES[i % len(VALUES)],
                    "geometry": struct.pack("<BIdd", 1, 1, x, y),
                    "bbox_minx": x, "bbox_miny": y, "bbox_maxx": x, "bbox_maxy": y})
    return out


def spark_regions(spark, table: str) -> dict:
    return {r.id: r.region for r in spark.sql(f"SELECT id, region FROM {CATALOG}.{table}").collect()}


def all_files(warehouse) -> set:
    """The files under the warehouse's parent."""
    return {p for p in warehouse.parent.rglob("*") if p.is_file()}


def files_outside(warehouse, table_dir, before: set) -> list:
    """Files under the warehouse's parent, not in before, that are neither
    the catalog's nor under table_dir."""
    return sorted(str(p) for p in all_files(warehouse) - before
                  if not p.name.startswith("catalog.db") and table_dir not in p.parents)


def test_partition_values_geocompact_writes_peers_read(gc, spark, pyiceberg_catalog, warehouse, ns, tmp_path):
    """geocompact ingests and rewrites a table partitioned by such values:
    its files stay in the table, and Spark and PyIceberg read every row
    with its value."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import json

    before_files = all_files(warehouse)
    want = {}
    for b in range(2):
        rs = rows(120, start_id=b * 120)
        want.update({r["id"]: r["region"] for r in rs})
        tbl = pa.Table.from_pylist(rs, schema=pa.schema([
            ("id", pa.int64()), ("region", pa.string()), ("geometry", pa.binary()),
            ("bbox_minx", pa.float64()), ("bbox_miny", pa.float64()),
            ("bbox_maxx", pa.float64()), ("bbox_maxy", pa.float64())]))
        geo = {"version": "1.1.0", "primary_column": "geometry",
               "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["Point"]}}}
        tbl = tbl.replace_schema_metadata({"geo": json.dumps(geo)})
        src = tmp_path / f"in{b}.parquet"
        pq.write_table(tbl, src)
        args = ["ingest", "--table", f"{ns}.pv", str(src)]
        if b == 0:
            args[3:3] = ["--create", "--partition-by", "region"]
        gc.run(*args)
    table = f"{ns}.pv"
    before = spark_fingerprint(spark, table)
    gc.run("rewrite", "--table", table, "--strategy", "binpack", "--option", "rewrite-all")
    gc.run("rewrite", "--table", table, "--curve", "hilbert", "--option", "rewrite-all")
    assert spark_fingerprint(spark, table).rows == before.rows == len(want)
    assert spark_regions(spark, table) == want

    py = pyiceberg_catalog.load_table(table).scan(selected_fields=("id", "region")).to_arrow()
    assert dict(zip(py.column("id").to_pylist(), py.column("region").to_pylist())) == want

    loc = pyiceberg_catalog.load_table(table).location()
    table_dir = type(warehouse)(loc.removeprefix("file://").removeprefix("file:"))
    assert (table_dir / "data" / "region=a%2Fb").is_dir()
    assert files_outside(warehouse, table_dir, before_files) == []


def test_spark_partition_values_rewritten_by_geocompact(gc, spark, warehouse, ns):
    """Spark writes a table partitioned by such values (its directories
    named literally, "region=a%2Fb"); geocompact rewrites it and Spark
    reads back the same rows with the same values."""
    before_files = all_files(warehouse)
    table = f"{ns}.spv"
    fq = f"{CATALOG}.{table}"
    cols = ("id bigint, region string, geometry binary, "
            "bbox_minx double, bbox_miny double, bbox_maxx double, bbox_maxy double")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{ns}")
    spark.sql(f"CREATE TABLE {fq} ({cols}) USING iceberg PARTITIONED BY (region) "
              "TBLPROPERTIES ('format-version'='2', 'geocompact.geometry.column'='geometry')")
    want = {}
    for b in range(3):
        rs = rows(60, start_id=b * 60)
        want.update({r["id"]: r["region"] for r in rs})
        spark.createDataFrame(rs, schema=cols).writeTo(fq).append()
    before = spark_fingerprint(spark, table)
    loc = spark.sql(f"DESCRIBE TABLE EXTENDED {fq}").where("col_name = 'Location'").collect()[0].data_type
    table_dir = type(warehouse)(loc.removeprefix("file://").removeprefix("file:"))
    assert (table_dir / "data" / "region=a%2Fb").is_dir(), sorted(p.name for p in (table_dir / "data").iterdir())

    for args in (("--strategy", "binpack"), ("--curve", "hilbert")):
        res = gc.run("rewrite", "--table", table, "--allow-layout-change", "--option", "rewrite-all", *args)
        assert res["added_data_files_count"] > 0, res
        assert spark_fingerprint(spark, table) == before
        assert spark_regions(spark, table) == want
    assert files_outside(warehouse, table_dir, before_files) == []
