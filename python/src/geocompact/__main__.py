"""``python -m geocompact ...`` runs the bundled binary with the same
arguments."""

from __future__ import annotations

import os
import sys

from ._binary import find_binary


def main() -> None:
    binary = find_binary()
    if os.name == "nt":  # no exec on Windows
        import subprocess

        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
