"""What each peer computes over a table, by its own means.

Every peer returns a Fingerprint of the rows it reads:
  rows      the row count;
  geo_sum   the sum over rows of the first 15 hex digits of md5(geometry's
            WKB), as an integer: order-independent, and the same in every
            peer (each computes md5 itself), so peers can be compared with
            each other;
  id_sum    the sum of the id column (0 when the table has none);
  row_hash  an order-independent hash of every column of each row, in the
            peer's own hash function (Spark xxhash64, DuckDB hash, pandas'
            hash_pandas_object): comparable only with the same peer's
            figure for another snapshot.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

# The name geocompact's embedded catalog records in catalog_name
# (table/catalogs.EmbeddedName); every peer must use the same one.
CATALOG = "geocompact"


PG_CATALOG = "pg"


def postgres() -> dict | None:
    """The PostgreSQL server of GEOCOMPACT_TEST_POSTGRES_URI
    (scripts/start-postgres.sh), in the forms each peer takes."""
    from urllib.parse import urlsplit

    uri = os.environ.get("GEOCOMPACT_TEST_POSTGRES_URI", "")
    if not uri:
        return None
    u = urlsplit(uri)
    return {
        "uri": uri,
        "jdbc": f"jdbc:postgresql://{u.hostname}:{u.port}{u.path}",
        "sqlalchemy": f"postgresql+psycopg2://{u.username}:{u.password}@{u.hostname}:{u.port}{u.path}",
        "user": u.username,
        "password": u.password,
    }


def metadata_location(catalog_db: Path, table: str) -> str:
    """The current metadata file of NS.T as the catalog records it."""
    ns, name = table.split(".")
    with sqlite3.connect(catalog_db, timeout=30) as db:
        row = db.execute(
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE catalog_name=? AND table_namespace=? AND table_name=?",
            (CATALOG, ns, name),
        ).fetchone()
    assert row, f"{table} is not in {catalog_db}"
    return row[0]


@dataclass(frozen=True)
class Fingerprint:
    rows: int
    geo_sum: int | None  # None: this peer cannot read the geometry column
    id_sum: int
    row_hash: int

    def shared(self) -> tuple[int, int, int]:
        """The figures every peer computes the same way."""
        return (self.rows, self.geo_sum, self.id_sum)


def _spark_columns(spark, fq: str) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark.table(fq).schema.fields]


def spark_fingerprint(spark, table: str, snapshot_id: int | None = None,
                      geometry: str = "geometry", catalog: str = CATALOG) -> Fingerprint:
    """Spark's figures for NS.T in Spark's catalog of that name, at
    snapshot_id when given (time travel)."""
    fq = f"{catalog}.{table}"
    cols = _spark_columns(spark, fq)
    names = [n for n, _ in cols]
    types = dict(cols)
    src = fq + (f" VERSION AS OF {snapshot_id}" if snapshot_id is not None else "")
    geo = f"`{geometry}`"
    if types.get(geometry, "binary") != "binary":
        geo = f"st_asbinary(`{geometry}`)"
    hashed = []
    for n, t in cols:
        hashed.append(f"st_asbinary(`{n}`)" if n == geometry and t != "binary" else f"`{n}`")
    id_sum = "sum(cast(id AS decimal(38,0)))" if "id" in names else "0"
    row = spark.sql(
        f"""SELECT count(*) AS n,
                   sum(cast(conv(substr(md5({geo}), 1, 15), 16, 10) AS decimal(38,0))) AS g,
                   {id_sum} AS i,
                   sum(cast(xxhash64({", ".join(hashed)}) AS decimal(38,0))) AS h
            FROM {src}"""
    ).collect()[0]
    return Fingerprint(int(row.n), int(row.g or 0), int(row.i or 0), int(row.h or 0))


def _md5_prefix_sum(values) -> int:
    total = 0
    for v in values:
        if v is not None:
            total += int(hashlib.md5(v).hexdigest()[:15], 16)
    return total


def pyiceberg_fingerprint(catalog, table: str, geometry: str = "geometry") -> Fingerprint:
    """PyIceberg's figures: its own scan planning and delete application,
    read into Arrow."""
    import pandas as pd

    from pyiceberg.types import GeometryType

    tbl = catalog.load_table(table)
    fields = tbl.schema().fields
    if any(f.name == geometry and isinstance(f.field_type, GeometryType) for f in fields):
        # PyIceberg 0.12 reads no geometry column from Parquet ("Cannot
        # promote an binary to geometry", whoever wrote the file):
        # everything else is read, and geo_sum is None.
        names = tuple(f.name for f in fields if f.name != geometry)
        arrow = tbl.scan(selected_fields=names).to_arrow()
    else:
        arrow = tbl.scan().to_arrow()
    geo = arrow.column(geometry).to_pylist() if geometry in arrow.column_names else None
    ids = arrow.column("id").to_pylist() if "id" in arrow.column_names else []
    frame = arrow.to_pandas()
    row_hash = int(pd.util.hash_pandas_object(frame, index=False).astype("uint64").sum()) \
        if len(frame) else 0
    return Fingerprint(arrow.num_rows, None if geo is None else _md5_prefix_sum(geo),
                       sum(i for i in ids if i is not None), row_hash)


def duck_fingerprint(duck, catalog_db: Path, table: str, geometry: str = "geometry") -> Fingerprint:
    """DuckDB's figures from iceberg_scan over the metadata file the catalog
    points at (DuckDB has no SQL-catalog client)."""
    meta = metadata_location(catalog_db, table)
    return duck_source_fingerprint(duck, f"iceberg_scan('{meta}')", geometry)


def duck_source_fingerprint(duck, src: str, geometry: str = "geometry") -> Fingerprint:
    """DuckDB's figures over src: an iceberg_scan(...) call or a table of an
    attached Iceberg catalog."""
    cols = [r[0] for r in duck.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
    types = {r[0]: r[1] for r in duck.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()}
    geo = f'"{geometry}"'
    if types.get(geometry, "BLOB") != "BLOB":
        geo = f'ST_AsWKB("{geometry}")'
    id_sum = 'sum("id"::HUGEINT)' if "id" in cols else "0"
    hashed = ", ".join(
        (f'ST_AsWKB("{c}")' if c == geometry and types[c] != "BLOB" else f'"{c}"') for c in cols)
    n, g, i, h = duck.execute(
        f"""SELECT count(*),
                   sum(('0x' || substr(md5({geo}), 1, 15))::BIGINT::HUGEINT),
                   {id_sum},
                   sum(hash({hashed})::HUGEINT)
            FROM {src}"""
    ).fetchone()
    return Fingerprint(int(n), int(g or 0), int(i or 0), int(h or 0))


def current_snapshot(spark, table: str, catalog: str = CATALOG) -> int:
    return int(spark.sql(
        f"SELECT snapshot_id FROM {catalog}.{table}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0][0])


def assert_metadata_tables_agree(spark, gc, table: str) -> None:
    """Spark's files, snapshots, manifests and partitions metadata tables
    hold the rows `geocompact inspect --json` prints."""
    fq = f"{CATALOG}.{table}"

    ours = {(f["file_path"], f["content"], f["record_count"], f["file_size_in_bytes"])
            for f in gc.run("inspect", "files", "--table", table)}
    theirs = {(r.file_path, r.content, r.record_count, r.file_size_in_bytes) for r in spark.sql(
        f"SELECT file_path, content, record_count, file_size_in_bytes FROM {fq}.files").collect()}
    assert ours == theirs, "files"

    ours = {(s["snapshot_id"], s["parent_id"], s["operation"])
            for s in gc.run("inspect", "snapshots", "--table", table)}
    theirs = {(r.snapshot_id, r.parent_id, r.operation) for r in spark.sql(
        f"SELECT snapshot_id, parent_id, operation FROM {fq}.snapshots").collect()}
    assert ours == theirs, "snapshots"

    keys = ["path", "length", "added_snapshot_id", "added_data_files_count",
            "existing_data_files_count", "deleted_data_files_count",
            "added_delete_files_count", "existing_delete_files_count", "deleted_delete_files_count"]
    ours = {tuple(m[k] for k in keys) for m in gc.run("inspect", "manifests", "--table", table)}
    theirs = {tuple(r[k] for k in keys) for r in spark.sql(
        f"SELECT {', '.join(keys)} FROM {fq}.manifests").collect()}
    assert ours == theirs, "manifests"

    cols = [r.col_name for r in spark.sql(f"DESCRIBE {fq}.partitions").collect()]
    if "partition" not in cols:
        return  # an unpartitioned table's partitions table has no partition column
    keys = ["record_count", "file_count", "total_data_file_size_in_bytes",
            "position_delete_record_count", "position_delete_file_count"]
    ours = {(tuple(str(v) for v in p["partition"].values()),) + tuple(p[k] for k in keys)
            for p in gc.run("inspect", "partitions", "--table", table)}
    theirs = {(tuple(str(v) for v in r.partition.asDict().values()),) + tuple(r[k] for k in keys)
              for r in spark.sql(f"SELECT partition, {', '.join(keys)} FROM {fq}.partitions").collect()}
    assert ours == theirs, "partitions"
