"""Build hook: put the Go binary in the wheel and tag the wheel for it.

build_wheel.sh compiles the binary for one GOOS/GOARCH, names its path in
GEOCOMPACT_WHEEL_BINARY and the wheel's platform tag in
GEOCOMPACT_WHEEL_PLATFORM
(manylinux_2_17_x86_64.manylinux2014_x86_64, macosx_12_0_arm64, ...). The
binary becomes the wheel's ``geocompact`` script, so installing the wheel
puts the command itself on PATH, with no Python in between.
"""

from __future__ import annotations

import os
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class GoBinaryHook(BuildHookInterface):  # type: ignore[type-arg]
    """Adds the binary as the geocompact script and sets the platform tag."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        binary = os.environ.get("GEOCOMPACT_WHEEL_BINARY", "")
        platform = os.environ.get("GEOCOMPACT_WHEEL_PLATFORM", "")
        if not os.path.isfile(binary) or not platform:
            raise RuntimeError(
                "build the wheel with python/build_wheel.sh: it compiles the Go binary "
                "and sets GEOCOMPACT_WHEEL_BINARY and GEOCOMPACT_WHEEL_PLATFORM"
            )
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{platform}"
        build_data["shared_scripts"][binary] = "geocompact"
