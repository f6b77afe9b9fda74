"""PyIceberg interplay: the docs' script runs as it is shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "examples" / "pyiceberg_roundtrip.py"
DOCS = HERE.parents[1] / "docs" / "python.md"


def test_docs_show_the_script_exactly() -> None:
    assert SCRIPT.read_text().strip() in DOCS.read_text()


def test_append_compact_read_back(tmp_path: Path) -> None:
    # A folder that does not exist yet, as a reader trying the script names.
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "new" / "lake")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "8 files -> " in out.stdout
    assert "PyIceberg reads the same 4000 rows" in out.stdout
