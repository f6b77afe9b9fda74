"""Append with PyIceberg, compact with geocompact, read back with PyIceberg.

Run: python pyiceberg_roundtrip.py [DIR]   (DIR defaults to a new temp dir)
"""

import os
import struct
import sys
import tempfile

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog

import geocompact

root = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else tempfile.mkdtemp()
os.makedirs(root, exist_ok=True)  # SQLite creates the catalog file, not its folder
catalog = SqlCatalog("local", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/warehouse")
catalog.create_namespace_if_not_exists("gis")

schema = pa.schema([
    ("id", pa.int64()),
    ("geometry", pa.binary()),  # WKB
    ("bbox_minx", pa.float64()), ("bbox_miny", pa.float64()),
    ("bbox_maxx", pa.float64()), ("bbox_maxy", pa.float64()),
])
table = catalog.create_table("gis.pings", schema=schema)


def pings(day: int, n: int = 500) -> pa.Table:
    """One day's pings: n points spread over the whole map, as they arrive."""
    ids = range(day * n, (day + 1) * n)
    xs = [((i * 7919) % 3600) / 10 - 180 for i in ids]
    ys = [((i * 104729) % 1800) / 10 - 90 for i in ids]
    return pa.Table.from_pydict({
        "id": list(ids),
        "geometry": [struct.pack("<BIdd", 1, 1, x, y) for x, y in zip(xs, ys)],
        "bbox_minx": xs, "bbox_miny": ys, "bbox_maxx": xs, "bbox_maxy": ys,
    }, schema=schema)


for day in range(8):  # eight appends: eight small files
    table.append(pings(day))
before = table.scan().to_arrow().sort_by("id")

# The catalog object's properties reach the binary through its environment.
result = geocompact.rewrite("gis.pings", catalog=catalog, curve="hilbert", options={"min-input-files": 2})
print(f"{result.rewritten_data_files_count} files -> {result.added_data_files_count}, verified={result.verified}")

table = catalog.load_table("gis.pings")
after = table.scan().to_arrow().sort_by("id")
assert after.num_rows == before.num_rows == 4000
assert after.to_pylist() == before.to_pylist(), "same rows after compaction"
assert len(table.inspect.files()) == result.added_data_files_count < 8
print("PyIceberg reads the same", after.num_rows, "rows from", result.added_data_files_count, "files")
