"""Finding the geocompact binary the wheel installed."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from .errors import BinaryNotFound

_EXE = "geocompact.exe" if os.name == "nt" else "geocompact"


def find_binary() -> str:
    """Returns the path of the geocompact binary.

    In order: ``$GEOCOMPACT_BINARY``; the scripts directory of this
    interpreter's install scheme (where the wheel put it, also in a
    virtualenv that is not activated); the user scheme's (``pip install
    --user``); beside the interpreter; then PATH.
    """
    explicit = os.environ.get("GEOCOMPACT_BINARY")
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise BinaryNotFound(f"GEOCOMPACT_BINARY={explicit} is not an executable file", exit_code=1)
        return explicit
    candidates = [Path(sysconfig.get_path("scripts")) / _EXE]
    user_scheme = f"{os.name}_user" if os.name != "posix" or sys.platform != "darwin" else "osx_framework_user"
    try:
        candidates.append(Path(sysconfig.get_path("scripts", user_scheme)) / _EXE)
    except KeyError:
        pass
    candidates.append(Path(sys.executable).parent / _EXE)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which(_EXE)
    if found:
        return found
    raise BinaryNotFound(
        "the geocompact binary is not installed beside this Python (looked in "
        + ", ".join(str(c.parent) for c in candidates)
        + " and on PATH); reinstall the geocompact wheel or set GEOCOMPACT_BINARY",
        exit_code=1,
    )
