"""geocompact.ray's driver with a stand-in for Ray that runs each task in
this process: the plan, work, commit and abort steps, retried attempts
and the shipped binary. The real cluster runs in python/ray/test_ray.sh."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import geocompact
import geocompact.ray as gr


class FakeRay(types.ModuleType):
    """ray.put/remote/get/get_runtime_context; fail(task, attempt) says
    which attempts die after running (their output is dropped and the
    task retried, as Ray retries a task whose worker died)."""

    def __init__(self, fail: Callable[[int, int], bool]) -> None:
        super().__init__("ray")
        self.fail, self.tasks = fail, 0
        self.options: dict[str, Any] = {}

    def put(self, value: Any) -> Any:
        return value

    def remote(self, **options: Any) -> Callable[[Callable[..., list[str]]], Any]:
        self.options = options

        def wrap(fn: Callable[..., list[str]]) -> Any:
            ray = self

            class Task:
                @staticmethod
                def remote(*args: Any) -> list[str]:
                    i, ray.tasks = ray.tasks, ray.tasks + 1
                    for attempt in range(options["max_retries"] + 1):
                        out = fn(*args)  # every attempt writes its files
                        if not ray.fail(i, attempt):
                            return out
                    raise RuntimeError("task failed after its retries")

            return Task

        return wrap

    def get(self, refs: list[list[str]]) -> list[list[str]]:
        return refs

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}

    def get_runtime_context(self) -> Any:
        return types.SimpleNamespace(get_node_id=lambda: "node-1")


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeRay]]:
    def make(fail: Callable[[int, int], bool] = lambda i, a: False) -> FakeRay:
        ray = FakeRay(fail)
        monkeypatch.setitem(sys.modules, "ray", ray)
        return ray

    yield make


def tagged(warehouse: Path, job: str) -> list[Path]:
    tag = f"{job[:8]}-{job[8:12]}-{job[12:16]}-"
    return [p for p in warehouse.rglob("*") if tag in p.name or job in p.name]


def test_ray_rewrite_commits_one_attempt_per_unit(warehouse: Path, demo: str, fake_ray: Any) -> None:
    ray = fake_ray(lambda i, a: i == 0 and a == 0)
    r = gr.run(demo, curve="hilbert", warehouse=warehouse, options={"min-input-files": 2}, ship_binary=True)
    assert ray.options == {"num_cpus": 1, "max_retries": 3, "retry_exceptions": True}
    assert r.result.verified and r.result.snapshots_committed == 1
    assert r.result.rewritten_data_files_count == 12
    assert len(r.units) == 1 and r.units[0]["rows"] == 20000 and r.units[0]["node"] == "node-1"
    files = [p for p in tagged(warehouse, r.units[0]["job"]) if p.suffix == ".parquet"]
    assert len(files) == r.result.added_data_files_count, "the lost attempt's files stayed"


def test_ray_rewrite_task_failure_aborts(warehouse: Path, demo: str, fake_ray: Any) -> None:
    fake_ray(lambda i, a: True)
    before = sorted(warehouse.rglob("*"))
    with pytest.raises(RuntimeError, match="after its retries"):
        gr.rewrite(demo, curve="hilbert", warehouse=warehouse, options={"min-input-files": 2}, max_retries=1)
    assert sorted(warehouse.rglob("*")) == before, "the aborted job left files"
    assert geocompact.metrics(demo, warehouse=warehouse).snapshot_count == 12


def test_ray_rewrite_memory_and_cpus(warehouse: Path, demo: str, fake_ray: Any) -> None:
    ray = fake_ray()
    r = gr.rewrite(demo, curve="hilbert", warehouse=warehouse, options={"min-input-files": 2}, num_cpus=2,
                   memory=512 << 20)
    assert r.verified
    assert ray.options == {"num_cpus": 2, "max_retries": 3, "retry_exceptions": True, "memory": 512 << 20}


@pytest.mark.parametrize("kw", [{"num_cpus": 0}, {"max_retries": -1}, {"memory": 0}])
def test_ray_rewrite_bad_arguments(kw: dict[str, int], warehouse: Path, demo: str, fake_ray: Any) -> None:
    fake_ray()
    with pytest.raises(ValueError, match="want num_cpus > 0"):
        gr.rewrite(demo, warehouse=warehouse, **kw)


def test_ray_rewrite_bad_option_is_usage_error(warehouse: Path, demo: str, fake_ray: Any) -> None:
    fake_ray()
    with pytest.raises(geocompact.UsageError, match="min-input"):
        gr.rewrite(demo, warehouse=warehouse, options={"min-input": 2})
