"""Equality deletes, compacted by geocompact.

Neither Spark SQL nor PyIceberg writes equality deletes, so they are
written through Iceberg Java's own API from the Spark session (py4j):
GenericFileWriterFactory writes the delete files (one per partition of a
day-partitioned table) and a RowDelta commits them, on v2 and v3 tables
Spark wrote, unpartitioned and partitioned by days(ts). geocompact validates, benches and
rewrites the table with the deletes applied; Spark reads the same rows
after the rewrite and at the snapshot before it. Equality deletes
committed while a rewrite runs make it exit 4 having committed nothing,
and no deleted row comes back.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from icepeers import CATALOG, assert_metadata_tables_agree, current_snapshot, spark_fingerprint
from test_theirs_compacted_by_ours import ROWS, rewrite, spark_table, validate_and_bench

VERSIONS = [pytest.param(2, id="v2"), pytest.param(3, id="v3")]
EQUALITY = 2  # the delete_files table's content of an equality delete file


def equality_delete(spark, table: str, column: str, values: list[int]) -> int:
    """Commits equality deletes on the int column in one RowDelta: every
    row whose column holds one of values is deleted. An equality delete
    applies only within its partition, so a partitioned table gets one
    delete file per partition of its live data files. Returns how many
    delete files were committed."""
    jvm = spark._jvm
    tbl = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"{CATALOG}.{table}")
    names = jvm.java.util.ArrayList()
    names.add(column)
    row_schema = tbl.schema().select(names)
    ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    ids[0] = tbl.schema().findField(column).fieldId()
    parquet = jvm.org.apache.iceberg.FileFormat.PARQUET
    factory = (getattr(jvm.org.apache.iceberg.data, "GenericFileWriterFactory$Builder")(tbl)
               .deleteFileFormat(parquet).equalityFieldIds(ids)
               .equalityDeleteRowSchema(row_schema).build())
    outputs = jvm.org.apache.iceberg.io.OutputFileFactory.builderFor(tbl, 1, 1).format(parquet).build()
    spec = tbl.spec()
    partitions = {"": None}
    if spec.isPartitioned():
        partitions = {}
        tasks = tbl.newScan().planFiles().iterator()
        while tasks.hasNext():
            part = tasks.next().file().partition()
            partitions.setdefault(spec.partitionToPath(part), part.copy())
        tasks.close()
    template = jvm.org.apache.iceberg.data.GenericRecord.create(row_schema)
    delta = tbl.newRowDelta()
    for part in partitions.values():
        out = outputs.newOutputFile() if part is None else outputs.newOutputFile(spec, part)
        writer = factory.newEqualityDeleteWriter(out, spec, part)
        for v in values:
            rec = template.copy()
            rec.setField(column, jvm.java.lang.Integer.valueOf(v))
            writer.write(rec)
        writer.close()
        delta.addDeletes(writer.toDeleteFile())
    delta.commit()
    return len(partitions)


def equality_delete_files(spark, fq: str) -> int:
    return spark.sql(f"SELECT count(*) FROM {fq}.delete_files WHERE content = {EQUALITY}").collect()[0][0]


FIGURES = ("SELECT count(*) n, count(DISTINCT id) d, sum(id) s, "
           "sum(cast(xxhash64(id, ts, device_id, geometry) AS decimal(38,0))) h FROM {src}")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("partition", [pytest.param("", id="unpartitioned"), pytest.param("days(ts)", id="day")])
def test_equality_deletes_rewritten(gc, spark, ns, version, partition):
    table = f"{ns}.eqdel"
    fq = f"{CATALOG}.{table}"
    spark_table(spark, table, version, partition=partition)
    written = current_snapshot(spark, table)
    gone = [3, 17, 42]
    files = equality_delete(spark, table, "device_id", gone)
    assert equality_delete_files(spark, fq) == files
    assert (files > 1) == bool(partition), "one delete file per partition"
    before = spark_fingerprint(spark, table)
    kept = spark.sql(FIGURES.format(src=f"{fq} VERSION AS OF {written}")
                     + f" WHERE device_id NOT IN ({', '.join(map(str, gone))})").collect()[0]
    assert before.rows == kept.n < ROWS, "Spark does not apply the equality deletes"
    snap = current_snapshot(spark, table)
    debt = gc.run("metrics", "--table", table)["deletes"]
    assert (debt["equality_delete_files"], debt["equality_delete_records"]) == (files, files * len(gone)), debt
    assert debt["position_delete_files"] == debt["deletion_vectors"] == debt["deleted_records"] == 0, debt

    validate_and_bench(gc, table)
    res = rewrite(gc, table, "--curve", "hilbert")
    print("rewrite", {k: res[k] for k in ("rewritten_data_files_count", "added_data_files_count",
                                          "removed_delete_files_count")})
    assert spark_fingerprint(spark, table) == before
    assert spark_fingerprint(spark, table, snapshot_id=snap) == before
    assert spark.sql(FIGURES.format(src=fq)).collect()[0] == kept
    assert spark.sql(f"SELECT count(*) FROM {fq} WHERE device_id IN "
                     f"({', '.join(map(str, gone))})").collect()[0][0] == 0
    assert_metadata_tables_agree(spark, gc, table)


@pytest.mark.parametrize("version", VERSIONS)
def test_equality_deletes_during_rewrite(gc, spark, ns, version):
    table = f"{ns}.eqrace"
    fq = f"{CATALOG}.{table}"
    spark_table(spark, table, version)
    start = current_snapshot(spark, table)
    # Several groups, one at a time: the delete lands after the rewrite has
    # read the table and before it commits. The rewrite is stopped while
    # the delete commits, once its first group is written.
    argv = [str(gc.binary), "--warehouse", str(gc.warehouse), "--json", "--log-level", "info",
            "rewrite", "--table", table, "--curve", "hilbert", "--allow-layout-change",
            "--option", "rewrite-all=true", "--option", "max-file-group-size-bytes=200000",
            "--option", "max-concurrent-file-group-rewrites=1"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = []
    for line in proc.stderr:
        log.append(line)
        if "rewrite group done" in line:
            break
    else:
        proc.wait()
        pytest.fail("the rewrite ended before its first group was done:\n" + "".join(log))
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        gone = [5, 23]
        equality_delete(spark, table, "device_id", gone)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    _, err = proc.communicate()
    assert proc.returncode == 4, "".join(log) + err

    ops = [r[0] for r in spark.sql(
        f"SELECT operation FROM {fq}.snapshots WHERE committed_at > "
        f"(SELECT committed_at FROM {fq}.snapshots WHERE snapshot_id = {start})").collect()]
    assert "replace" not in ops, "exit 4 must commit nothing"
    now = spark.sql(FIGURES.format(src=fq)).collect()[0]
    want = spark.sql(FIGURES.format(src=f"{fq} VERSION AS OF {start}")
                     + f" WHERE device_id NOT IN ({', '.join(map(str, gone))})").collect()[0]
    assert now.n == now.d, "a row is read twice"
    assert now == want, "a deleted row came back, or a row was lost"
