"""Private temporary directories that a killed process does not leave
behind for good.

Each directory holds a lock file, locked (``flock``) while its process
lives; the kernel drops the lock when the process dies, however it dies.
Making a directory first removes the directories of the same prefix under
the same root whose lock is free: theirs were left by a killed driver or
worker. This is the protocol of the binary's own spill and staging
directories, so either side may remove the other's leftovers of a kind
they share. Where there is no ``flock`` (Windows) nothing is swept.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

#: Whether folders are locked, and so swept once their process is dead.
HAS_FLOCK = fcntl is not None

#: How old a directory without a lock file must be to be taken for one
#: whose process was killed before it locked it (else it may be new).
_UNLOCKED_GRACE_SECONDS = 60.0


@contextlib.contextmanager
def scratch_dir(prefix: str, root: str | None = None) -> Iterator[str]:
    """Makes a private directory under root (the temporary directory by
    default), named prefix, this process's id and a random suffix, after
    sweeping what killed processes left there under prefix; yields its
    path and removes it on exit."""
    root = root or tempfile.gettempdir()
    sweep(root, prefix)
    path = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=root)
    lock = None
    try:
        if fcntl is not None:
            # Locked under a temporary name, then renamed: a concurrent
            # sweep never sees a free lock of a directory being made.
            pending = os.path.join(path, "lock.new")
            lock = open(pending, "w")
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            lock.write(f"pid {os.getpid()}\n")
            lock.flush()
            os.rename(pending, os.path.join(path, "lock"))
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if lock is not None:
            lock.close()


def sweep(root: str, prefix: str) -> list[str]:
    """Removes the directories under root named with prefix that no live
    process holds, and returns their paths."""
    if fcntl is None:
        return []
    try:
        names = os.listdir(root)
    except OSError:
        return []
    removed = []
    for name in names:
        path = os.path.join(root, name)
        if name.startswith(prefix) and not os.path.islink(path) and os.path.isdir(path) and _remove_abandoned(path):
            removed.append(path)
    return removed


def _remove_abandoned(path: str) -> bool:
    """Removes the directory at path if no live process holds it, keeping
    the dead process's lock while it removes, so that two sweeps never
    race on the same directory."""
    assert fcntl is not None
    try:
        f = open(os.path.join(path, "lock"), "r+")
    except FileNotFoundError:
        # No lock file: a process killed before it locked its directory,
        # unless the directory is new and its lock is being taken.
        try:
            age = time.time() - os.stat(path).st_mtime
        except OSError:
            return False
        if age < _UNLOCKED_GRACE_SECONDS:
            return False
        shutil.rmtree(path, ignore_errors=True)
        return True
    except OSError:
        return False
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        shutil.rmtree(path, ignore_errors=True)
    return True
