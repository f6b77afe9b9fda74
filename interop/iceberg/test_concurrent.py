"""Spark appends to a table while geocompact rewrites it through the same
catalog: afterwards Spark reads every row exactly once, and the rewrite
either committed (retrying on the fresh base) or exited 4 having
committed nothing."""

from __future__ import annotations

import subprocess

from icepeers import CATALOG, spark_fingerprint
from test_ours_read_by_theirs import generate

ROWS = 40000
APPEND = 500


def test_spark_appends_during_rewrite(gc, spark, ns):
    table = f"{ns}.busy"
    fq = f"{CATALOG}.{table}"
    generate(gc, table, 2, "", rows=ROWS, commits=20)
    before = spark_fingerprint(spark, table)
    snaps_before = {r[0] for r in spark.sql(f"SELECT snapshot_id FROM {fq}.snapshots").collect()}

    argv = [str(gc.binary), "--warehouse", str(gc.warehouse), "--json", "rewrite",
            "--table", table, "--curve", "hilbert", "--allow-layout-change",
            "--option", "rewrite-all=true", "--option", "target-file-size-bytes=300000"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    appended = []
    base = 10_000_000
    # Append while the rewrite runs (and at least three times).
    while proc.poll() is None or len(appended) < 3:
        start = base + len(appended) * APPEND
        spark.sql(f"""INSERT INTO {fq}
            SELECT id, ts, device_id, geometry, bbox_minx, bbox_miny, bbox_maxx, bbox_maxy
            FROM (SELECT id + {start - 0} AS id, ts, device_id, geometry,
                         bbox_minx, bbox_miny, bbox_maxx, bbox_maxy
                  FROM {fq} VERSION AS OF {min(snaps_before)} LIMIT {APPEND})""")
        appended.append(start)
    out, err = proc.communicate()
    assert proc.returncode in (0, 4), err

    rows = spark.sql(f"SELECT count(*) n, count(DISTINCT id) d FROM {fq}").collect()[0]
    assert rows.n == rows.d, "a row is read twice"
    ops = [r[0] for r in spark.sql(
        f"SELECT operation FROM {fq}.snapshots WHERE snapshot_id NOT IN "
        f"({', '.join(map(str, snaps_before))})").collect()]
    assert ops.count("append") == len(appended)
    if proc.returncode == 0:
        assert ops.count("replace") >= 1
    else:
        assert "replace" not in ops, "exit 4 must commit nothing"
    # Every generated row once, every appended batch once.
    first = spark.sql(f"SELECT count(*) n, sum(id) s FROM {fq} WHERE id < {base}").collect()[0]
    assert (first.n, first.s) == (before.rows, before.id_sum)
    batches = spark.sql(f"SELECT count(*) n FROM {fq} WHERE id >= {base}").collect()[0]
    assert batches.n == APPEND * len(appended)
    print(f"rewrite exit {proc.returncode}, {len(appended)} Spark appends during it, ops {ops}")
