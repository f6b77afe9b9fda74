"""Delta tables written by delta-rs and by Delta on Spark, validated,
measured and rewritten by geocompact: the engine that wrote the table (and
the other peers) reads back the rows it wrote, and a table feature
geocompact cannot keep is refused by name with nothing written."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pytest
from conftest import (
    all_figures,
    assert_all_equal,
    commit_actions,
    delta_rs_figures,
    log_versions,
    points,
    spark_figures,
    tree_state,
)
from deltalake import DeltaTable, write_deltalake


def validate_bench_rewrite(gc, table: pathlib.Path, *layout: str) -> dict:
    """geocompact's read-only commands, then its OPTIMIZE."""
    v = gc.run("validate", "--delta", str(table))
    assert v["ok"] is True, v
    b = gc.run("bench", "--delta", str(table), "--layouts", "current,hilbert", "--window-count", "20")
    assert {r["layout"] for r in b["layouts"]} == {"current", "hilbert"}, b
    res = gc.run("rewrite", "--delta", str(table), *(layout or ("--curve", "hilbert")), "--option", "rewrite-all=true")
    assert res["verified"] is True and res["versions_committed"] == 1, res
    return res


def spark_df(spark, table: pa.Table):
    return spark.createDataFrame(table.to_pandas())


def live_dv_count(table: pathlib.Path) -> int:
    """Live files carrying a deletion vector (see live_files)."""
    return sum(live_files(table).values())


# ---------------------------------------------------------------- delta-rs


def test_delta_rs_appends(gc, spark, tmp_path):
    table = tmp_path / "t"
    for b in range(6):
        write_deltalake(str(table), points(b * 100, 100), mode="append")
    want = delta_rs_figures(table)
    assert want.n == 600
    res = validate_bench_rewrite(gc, table)
    assert res["rewritten_data_files_count"] == 6 and res["added_data_files_count"] == 1
    assert_all_equal(all_figures(spark, table), want)
    # delta-rs appends on top of our OPTIMIZE and reads it all back.
    write_deltalake(str(table), points(600, 50), mode="append")
    assert delta_rs_figures(table).n == 650
    assert len(DeltaTable(str(table)).file_uris()) == 2


def test_delta_rs_overwrite_then_appends(gc, spark, tmp_path):
    table = tmp_path / "t"
    for b in range(3):
        write_deltalake(str(table), points(b * 100, 100), mode="append")
    write_deltalake(str(table), points(1000, 100), mode="overwrite")
    for b in range(4):
        write_deltalake(str(table), points(2000 + b * 100, 100), mode="append")
    want = delta_rs_figures(table)
    assert want.n == 500
    res = validate_bench_rewrite(gc, table, "--curve", "kd")
    assert res["rewritten_data_files_count"] == 5
    assert_all_equal(all_figures(spark, table), want)


def test_delta_rs_partitioned(gc, spark, tmp_path):
    table = tmp_path / "t"
    for b in range(5):
        write_deltalake(str(table), points(b * 100, 100), mode="append", partition_by=["region"])
    want = delta_rs_figures(table)
    res = validate_bench_rewrite(gc, table)
    assert res["added_data_files_count"] == 2
    assert_all_equal(all_figures(spark, table), want)
    dt = DeltaTable(str(table))
    assert dt.metadata().partition_columns == ["region"]
    parts = sorted(p["region"] for p in dt.partitions())
    assert parts == ["east", "west"]


def test_delta_rs_table_without_bbox_binpacks(gc, spark, tmp_path):
    """Any table bin-packs; a curve needs the bbox columns and says so."""
    table = tmp_path / "t"
    for b in range(5):
        t = points(b * 100, 100)
        plain = pa.table(
            {
                "id": t["id"],
                "name": t["name"],
                "lon": t["bbox_minx"],
                "lat": t["bbox_miny"],
                "payload": t["geometry"],
            }
        )
        write_deltalake(str(table), plain, mode="append")
    cols = {"x": "lon", "y": "lat", "geom": "payload"}
    want = delta_rs_figures(table, cols)
    before = tree_state(table)
    curve = gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--option", "rewrite-all=true", check=False)
    assert curve.returncode != 0
    assert "bbox" in curve.stderr, curve.stderr
    assert tree_state(table) == before, "a refused rewrite wrote something"

    res = gc.run("rewrite", "--delta", str(table), "--strategy", "binpack", "--option", "rewrite-all=true")
    assert res["rewritten_data_files_count"] == 5 and res["added_data_files_count"] == 1
    assert_all_equal(all_figures(spark, table, cols), want)


# ---------------------------------------------------------------- Spark


def spark_table(spark, path: pathlib.Path, props: dict[str, str], *, batches: int = 3, rows: int = 100, cluster: str = "") -> None:
    spark_df(spark, points(0, rows)).createOrReplaceTempView("src")
    tp = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
    spark.sql(
        f"CREATE TABLE delta.`{path}` USING delta {cluster} "
        + (f"TBLPROPERTIES ({tp}) " if tp else "")
        + "AS SELECT * FROM src"
    )
    for b in range(1, batches):
        spark_df(spark, points(b * rows, rows)).coalesce(1).write.format("delta").mode("append").save(str(path))


def test_spark_deletion_vectors(gc, spark, tmp_path):
    table = tmp_path / "t"
    spark_table(spark, table, {"delta.enableDeletionVectors": "true"})
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id % 7 = 0")
    assert live_dv_count(table) > 0, "Spark wrote no deletion vector"
    want = spark_figures(spark, table)
    assert want.n == 300 - len(range(0, 300, 7))
    res = validate_bench_rewrite(gc, table)
    assert res["verified"]
    assert live_dv_count(table) == 0
    assert_all_equal(all_figures(spark, table), want)
    # Spark keeps writing deletion vectors on the rewritten table.
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id % 11 = 0")
    assert live_dv_count(table) > 0
    after = spark_figures(spark, table)
    assert after.n == want.n - len([i for i in range(300) if i % 11 == 0 and i % 7 != 0])
    assert delta_rs_figures(table) == after


def live_files(table: pathlib.Path) -> dict[str, bool]:
    """The live files, replayed from the JSON commits (delta-rs's add
    actions do not show deletion vectors), and whether each carries a
    deletion vector."""
    assert not list((table / "_delta_log").glob("*.checkpoint*")), "replay needs every commit"
    live: dict[str, bool] = {}
    for v in log_versions(table):
        acts = commit_actions(table, v)
        # A commit that gives a file a deletion vector removes the file
        # without it and adds it with it, in either order.
        for a in acts:
            if "remove" in a:
                live.pop(a["remove"]["path"], None)
        for a in acts:
            if "add" in a:
                live[a["add"]["path"]] = bool(a["add"].get("deletionVector"))
    return live


def test_reorg_purge_beside_sparks(gc, spark, tmp_path):
    """REORG TABLE … APPLY (PURGE) by geocompact and by Delta on Spark on
    twin tables whose DELETEs left deletion vectors: each rewrites exactly
    the files with a vector, the peers read the same rows from both, and
    neither leaves a vector; geocompact's commit changes no data."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for t in (ours, theirs):
        spark_table(spark, t, {"delta.enableDeletionVectors": "true"}, batches=4)
        spark.sql(f"DELETE FROM delta.`{t}` WHERE id % 5 = 0 AND id < 250")
    before = live_files(ours)
    with_dv = {p for p, dv in before.items() if dv}
    assert with_dv and len(with_dv) < len(before), f"want some files with vectors and some without: {before}"
    want = spark_figures(spark, ours)
    assert want == spark_figures(spark, theirs)

    res = gc.run("sql", f"REORG TABLE delta.`{ours}` APPLY (PURGE)")
    row = res["rows"][0]
    assert row["rewritten_data_files_count"] == len(with_dv), res
    spark.sql(f"REORG TABLE delta.`{theirs}` APPLY (PURGE)")

    after = live_files(ours)
    assert not any(after.values()), "a live file still carries a deletion vector"
    assert {p for p in before if not before[p]} <= set(after), "a file without a vector was rewritten"
    assert not any(live_files(theirs).values())
    last = commit_actions(ours, log_versions(ours)[-1])
    assert all(a[k]["dataChange"] is False for a in last for k in ("add", "remove") if k in a), last
    op = [a["commitInfo"]["operation"] for a in last if "commitInfo" in a]
    spark_op = [a["commitInfo"]["operation"] for a in commit_actions(theirs, log_versions(theirs)[-1]) if "commitInfo" in a]
    assert op == spark_op, f"our commit is {op}, Spark's {spark_op}"
    assert_all_equal(all_figures(spark, ours), want)
    assert_all_equal(all_figures(spark, theirs), want)
    again = gc.run("sql", f"REORG TABLE delta.`{ours}` APPLY (PURGE)")
    assert again["rows"][0]["rewritten_data_files_count"] == 0, again


def test_spark_column_mapping_renamed(gc, spark, tmp_path):
    table = tmp_path / "t"
    spark_table(spark, table, {"delta.columnMapping.mode": "name"})
    spark.sql(f"ALTER TABLE delta.`{table}` RENAME COLUMN name TO label")
    spark.sql(f"ALTER TABLE delta.`{table}` DROP COLUMN ts")
    cols = {"name": "label"}
    want = spark_figures(spark, table, cols)
    assert want.n == 300
    res = validate_bench_rewrite(gc, table)
    assert res["added_data_files_count"] == 1
    assert_all_equal(all_figures(spark, table, cols), want)
    assert "ts" not in spark.read.format("delta").load(str(table)).columns
    # The new file is written under the physical names the log maps.
    (version,) = res["versions"]
    (add,) = [a["add"] for a in commit_actions(table, version) if "add" in a]
    import pyarrow.parquet as pq

    names = pq.read_schema(table / add["path"]).names
    assert "label" not in names and all(n.startswith("col-") for n in names), names


def test_spark_v2_checkpoints(gc, spark, tmp_path):
    table = tmp_path / "t"
    spark_table(spark, table, {"delta.checkpointPolicy": "v2", "delta.checkpointInterval": "2"}, batches=5)
    log = table / "_delta_log"
    assert list(log.glob("*.checkpoint.*.json")) or list(log.glob("*.checkpoint.*.parquet")), "no v2 checkpoint"
    want = spark_figures(spark, table)
    validate_bench_rewrite(gc, table)
    assert_all_equal(all_figures(spark, table), want)
    # Spark checkpoints again over our commit and every peer follows.
    for b in range(2):
        spark_df(spark, points(5000 + b * 10, 10)).coalesce(1).write.format("delta").mode("append").save(str(table))
    after = spark_figures(spark, table)
    assert after.n == want.n + 20
    assert_all_equal(all_figures(spark, table), after)


# ------------------------------------------------------------- refusals


REFUSED = {
    # liquid clustering: an OPTIMIZE must keep the clustering it records
    "clustering": ({}, "CLUSTER BY (bbox_minx, bbox_miny)", ""),
    # row tracking: rewritten rows must keep their row ids
    "rowTracking": ({"delta.enableRowTracking": "true"}, "", ""),
    # in-commit timestamps: every commit must carry one
    "inCommitTimestamp": ({"delta.enableInCommitTimestamps": "true"}, "", ""),
    # an active CHECK constraint
    "checkConstraints": ({}, "", "ALTER TABLE delta.`{t}` ADD CONSTRAINT idpos CHECK (id >= 0)"),
}


@pytest.mark.parametrize("feature", sorted(REFUSED))
def test_spark_feature_refused_by_name(gc, spark, tmp_path, feature):
    props, cluster, alter = REFUSED[feature]
    table = tmp_path / "t"
    spark_table(spark, table, props, batches=2, cluster=cluster)
    if alter:
        spark.sql(alter.format(t=table))
    want = spark_figures(spark, table)
    versions, before = log_versions(table), tree_state(table)

    # Reading is fine: validate and bench write nothing to the table.
    assert gc.run("validate", "--delta", str(table))["ok"] is True
    gc.run("bench", "--delta", str(table), "--layouts", "current,hilbert", "--window-count", "10")
    proc = gc.run("rewrite", "--delta", str(table), "--curve", "hilbert", "--option", "rewrite-all=true", check=False)
    assert proc.returncode != 0
    assert f'feature "{feature}" is not supported' in proc.stderr, proc.stderr
    assert log_versions(table) == versions and tree_state(table) == before
    assert spark_figures(spark, table) == want
