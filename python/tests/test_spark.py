"""geocompact.spark's driver with a stand-in for Spark that runs each
partition in this process: the plan, work, commit and abort steps and the
results of retried attempts. The real cluster runs in
python/spark/test_spark.sh."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import write_geoparquet

import geocompact
import geocompact.spark as gs


class FakeRDD:
    def __init__(self, parts: list[list[str]], fail: Callable[[int, int], bool]) -> None:
        self.parts, self.fail = parts, fail
        self.fn: Callable[[Iterator[str]], Iterator[str]] | None = None

    def mapPartitions(self, fn: Callable[[Iterator[str]], Iterator[str]]) -> FakeRDD:  # noqa: N802
        self.fn = fn
        return self

    def collect(self) -> list[str]:
        assert self.fn is not None
        out: list[str] = []
        for i, part in enumerate(self.parts):
            attempt = 0
            while True:
                lines = list(self.fn(iter(part)))  # every attempt writes its files
                if not self.fail(i, attempt):
                    break
                attempt += 1
            out += lines
        return out


class FakeSpark:
    """A SparkSession whose tasks run here; fail(partition, attempt) says
    which attempts Spark would count as failed (their output is dropped)."""

    defaultParallelism = 2  # noqa: N815

    def __init__(self, fail: Callable[[int, int], bool] = lambda i, a: False) -> None:
        self.sparkContext = self
        self.fail = fail
        self.tasks: list[int] = []

    def parallelize(self, items: list[Any], n: int) -> FakeRDD:
        assert n == len(items), "one task per batch"
        self.tasks.append(n)
        return FakeRDD([[x] for x in items], self.fail)

    def getConf(self) -> dict[str, str]:  # noqa: N802
        return {}


def tagged(warehouse: Path, job: str) -> list[Path]:
    tag = f"{job[:8]}-{job[8:12]}-{job[12:16]}-"
    return [p for p in warehouse.rglob("*") if tag in p.name or job in p.name]


def test_spark_rewrite_commits_one_attempt_per_unit(warehouse: Path, demo: str) -> None:
    # Partition 0's first attempt is lost after it wrote its files.
    r = gs.run(FakeSpark(lambda i, a: i == 0 and a == 0), demo, curve="hilbert", warehouse=warehouse,
               options={"min-input-files": 2})
    assert isinstance(r.result, geocompact.RewriteResult)
    assert r.result.verified and r.result.snapshots_committed == 1
    assert r.result.rewritten_data_files_count == 12
    assert len(r.units) == 1 and r.units[0]["rows"] == 20000
    files = [p for p in tagged(warehouse, r.units[0]["job"]) if p.suffix == ".parquet"]
    assert len(files) == r.result.added_data_files_count, "the lost attempt's files stayed"


def test_spark_rewrite_shuffles_a_large_group(warehouse: Path, demo: str) -> None:
    # One group over the 256 KiB budget: scatter, bucket and span stages,
    # every stage's first task lost once after it wrote its files.
    opts = {"min-input-files": 2, "max-group-memory-bytes": 262144, "target-file-size-bytes": 36000}
    spark = FakeSpark(lambda i, a: i == 0 and a == 0)
    r = gs.run(spark, demo, curve="hilbert", warehouse=warehouse, options=opts)
    assert r.result.verified and r.result.snapshots_committed == 1
    assert spark.tasks[0] == 4, "12 files scattered 3 per unit (2 units per slot), a task each"
    kinds = [u["kind"] for u in r.units]
    assert kinds[0] == "scatter" and "bucket" in kinds, kinds
    assert sum(u["rows"] for u in r.units if u["kind"] != "scatter") == 20000
    left = tagged(warehouse, r.units[0]["job"])
    assert not [p for p in left if "geocompact-shuffle" in str(p)], "shuffle files stayed"
    assert len([p for p in left if p.suffix == ".parquet"]) == r.result.added_data_files_count

    # The same table without the shuffle: one unit, one executor spilling.
    twin = warehouse / "twin"
    from conftest import generate

    generate(twin, "demo.pings")
    r2 = gs.run(FakeSpark(), demo, curve="hilbert", warehouse=twin, options=opts, shuffle="never")
    assert [u.get("kind") for u in r2.units] == [None]
    assert r2.result.added_data_files_count == r.result.added_data_files_count
    with pytest.raises(ValueError, match="shuffle 'yes'"):
        gs.run(FakeSpark(), demo, warehouse=twin, shuffle="yes")


def test_spark_rewrite_failure_aborts(warehouse: Path, demo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def boom() -> None:
        seen["files"] = sorted(warehouse.rglob("*.parquet"))
        raise RuntimeError("driver failed")

    monkeypatch.setattr(gs, "_before_commit", boom)
    before = sorted(warehouse.rglob("*"))
    with pytest.raises(RuntimeError, match="driver failed"):
        gs.rewrite(FakeSpark(), demo, curve="hilbert", warehouse=warehouse, options={"min-input-files": 2})
    assert len(seen["files"]) > 12, "the units wrote nothing"
    assert sorted(warehouse.rglob("*")) == before, "the aborted job left files"


def test_spark_rewrite_bad_option_is_usage_error(warehouse: Path, demo: str) -> None:
    with pytest.raises(geocompact.UsageError, match="min-input"):
        gs.rewrite(FakeSpark(), demo, warehouse=warehouse, options={"min-input": 2})


def test_spark_rewrite_uses_a_catalog_dict_alone(tmp_path: Path, warehouse: Path) -> None:
    """A dict catalog reaches the driver's plan and commit and every
    executor's work exactly: a same-name catalog in ./geocompact.yaml is
    not used instead."""
    prod = {"type": "sql", "uri": f"sqlite:///{tmp_path}/prod.db", "warehouse": f"file://{tmp_path}/prodwh"}
    scratch = {"type": "sql", "uri": f"sqlite:///{tmp_path}/scratch.db", "warehouse": f"file://{tmp_path}/scratchwh"}
    Path("geocompact.yaml").write_text(
        "catalogs:\n  default:\n    type: sql\n"
        f"    warehouse: file://{tmp_path}/prodwh\n"
        f"    properties:\n      uri: file:{tmp_path}/prod.db\n      sql.dialect: sqlite\n      sql.driver: sqlite\n")
    f = write_geoparquet(tmp_path / "in.parquet", 300)
    for props in (prod, scratch):
        for i in range(3):
            geocompact.ingest("gis.t", [f], create=i == 0, add_bbox=True, allow_duplicates=True, catalog=props)
    before = geocompact.metrics("gis.t", catalog=prod).snapshot_count
    r = gs.rewrite(FakeSpark(), "gis.t", curve="hilbert", catalog=scratch, options={"min-input-files": 2})
    assert r.snapshots_committed == 1
    assert geocompact.metrics("gis.t", catalog=prod).snapshot_count == before
    assert geocompact.metrics("gis.t", catalog=scratch).snapshot_count == 4


def test_spark_rewrite_api_refusals(warehouse: Path, demo: str) -> None:
    with pytest.raises(ValueError, match="api 'sql': want 'rdd' or 'dataframe'"):
        gs.rewrite(FakeSpark(), demo, warehouse=warehouse, api="sql")
    with pytest.raises(ValueError, match="takes no ship_binary"):
        gs.rewrite(FakeSpark(), demo, warehouse=warehouse, api="dataframe", ship_binary=True)
    assert geocompact.metrics(demo, warehouse=warehouse).snapshot_count == 12


def test_batches_deal_units_into_tasks() -> None:
    from geocompact._jobs import batches

    assert batches(["a", "b"], 2) == [["a"], ["b"]]
    assert batches([], 2) == []
    got = batches([str(i) for i in range(20)], 2)
    assert len(got) == 4 and sorted(u for b in got for u in b) == sorted(str(i) for i in range(20))
    assert max(map(len, got)) - min(map(len, got)) <= 1
    assert len(batches(["a"] * 5, 0)) == 2, "no slot counts as one"
