"""The work folders of the jobs API against killed processes: a driver or
worker killed with SIGKILL leaves its folder, and the next folder made
under the same temporary directory removes it, never one a live process
holds nor one of another kind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from geocompact import _jobs, _scratch

pytestmark = pytest.mark.skipif(not _scratch.HAS_FLOCK, reason="no flock on this platform: nothing is swept")

HOLDER = textwrap.dedent(
    """
    import sys, time
    from geocompact._scratch import scratch_dir
    with scratch_dir(sys.argv[1], sys.argv[2]) as path:
        open(path + "/job.json", "w").write("{}")
        print(path, flush=True)
        time.sleep(600)
    """
)


def hold(prefix: str, root: Path) -> tuple[subprocess.Popen[str], str]:
    """Starts a process that makes a folder and waits; returns it and the
    folder's path."""
    p = subprocess.Popen([sys.executable, "-c", HOLDER, prefix, str(root)], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    path = p.stdout.readline().strip()
    assert path and os.path.isdir(path), "the holder made no folder"
    return p, path


def test_killed_holder_folder_is_removed_by_the_next(tmp_path: Path) -> None:
    live_proc, live = hold("geocompact-job-", tmp_path)
    killed_proc, killed = hold("geocompact-job-", tmp_path)
    other_proc, other = hold("geocompact-work-", tmp_path)
    try:
        killed_proc.send_signal(signal.SIGKILL)
        killed_proc.wait()
        other_proc.send_signal(signal.SIGKILL)
        other_proc.wait()
        assert os.path.isdir(killed), "a SIGKILL leaves the folder behind"

        with _scratch.scratch_dir("geocompact-job-", str(tmp_path)) as mine:
            assert not os.path.exists(killed), "the killed process's folder is removed"
            assert os.path.isdir(live), "a live process's folder stays"
            assert os.path.isdir(other), "a folder of another kind stays"
            assert os.path.isdir(mine)
        assert not os.path.exists(mine), "a folder is removed when its work ends"
        assert _scratch.sweep(str(tmp_path), "geocompact-work-") == [other]
    finally:
        live_proc.send_signal(signal.SIGKILL)
        live_proc.wait()


def test_unlocked_folder_is_kept_while_new(tmp_path: Path) -> None:
    """A folder without its lock file may be one whose lock is being
    taken: it is removed only once it is old."""
    young = tmp_path / "geocompact-job-1-young"
    old = tmp_path / "geocompact-job-2-old"
    young.mkdir()
    old.mkdir()
    past = time.time() - 2 * _scratch._UNLOCKED_GRACE_SECONDS
    os.utime(old, (past, past))
    assert _scratch.sweep(str(tmp_path), "geocompact-job-") == [str(old)]
    assert young.is_dir()


def test_symlink_named_like_a_folder_is_not_followed(tmp_path: Path) -> None:
    """A link named like a work folder is not a folder of ours: the sweep
    leaves it and what it points at."""
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep").write_text("x")
    os.symlink(target, tmp_path / "geocompact-job-3-link")
    assert _scratch.sweep(str(tmp_path), "geocompact-job-") == []
    assert (target / "keep").is_file()


def test_work_run_removes_a_killed_worker_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed mid-task leaves its job file's folder; the next
    task run on that machine removes it."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    proc, killed = hold("geocompact-work-", tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    fake = tmp_path / "fake-geocompact"
    fake.write_text("#!/bin/sh\ncat >/dev/null\n")
    fake.chmod(0o755)
    assert _jobs.Work('{"id": "j"}', []).run(["{}"], str(fake)) == []
    assert not os.path.exists(killed), "the killed worker's folder is removed"
    assert not [n for n in os.listdir(tmp_path) if n.startswith("geocompact-")], "the task leaves no folder"
