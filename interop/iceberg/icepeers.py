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
import sqlite3
from dataclasses import dataclass
from pathlib import Path

# The name geocompact's embedded catalog records in catalog_name
# (engine/catalogs.EmbeddedName); every peer must use the same one.
CATALOG = "geocompact"


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
    geo_sum: int
    id_sum: int
    row_hash: int

    def shared(self) -> tuple[int, int, int]:
        """The figures every peer computes the same way."""
        return (self.rows, self.geo_sum, self.id_sum)


def _spark_columns(spark, fq: str) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark.table(fq).schema.fields]


def spark_fingerprint(spark, table: str, snapshot_id: int | None = None,
                      geometry: str = "geometry") -> Fingerprint:
    """Spark's figures for NS.T, at snapshot_id when given (time travel)."""
    fq = f"{CATALOG}.{table}"
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

    arrow = catalog.load_table(table).scan().to_arrow()
    geo = arrow.column(geometry).to_pylist() if geometry in arrow.column_names else []
    ids = arrow.column("id").to_pylist() if "id" in arrow.column_names else []
    frame = arrow.to_pandas()
    row_hash = int(pd.util.hash_pandas_object(frame, index=False).astype("uint64").sum()) \
        if len(frame) else 0
    return Fingerprint(arrow.num_rows, _md5_prefix_sum(geo), sum(i for i in ids if i is not None),
                       row_hash)


def duck_fingerprint(duck, catalog_db: Path, table: str, geometry: str = "geometry") -> Fingerprint:
    """DuckDB's figures from iceberg_scan over the metadata file the catalog
    points at (DuckDB has no SQL-catalog client)."""
    meta = metadata_location(catalog_db, table)
    src = f"iceberg_scan('{meta}')"
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


def current_snapshot(spark, table: str) -> int:
    return int(spark.sql(
        f"SELECT snapshot_id FROM {CATALOG}.{table}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0][0])
