#!/usr/bin/env bash
# python/test_wheel.sh builds the wheel for this machine, installs it into
# a clean virtualenv and runs the Python tests (pytest) and the type check
# (mypy) there with no Go toolchain on PATH, as a user's machine would be.
#
#   python/test_wheel.sh [pytest args...]
#
# The virtualenv holds the pinned test tools (requirements-test.txt) and is
# cached under GEOCOMPACT_PYTHON_CACHE (default ~/.cache/geocompact/python),
# keyed by their pins; the wheel is reinstalled only when it changed, so a
# rerun installs nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${GEOCOMPACT_PYTHON_CACHE:-$HOME/.cache/geocompact/python}"
mkdir -p "$cache"

wheel_dir="$(mktemp -d)"
trap 'rm -rf "$wheel_dir"' EXIT
wheel="$(GEOCOMPACT_WHEEL_DIR="$wheel_dir" "$here/build_wheel.sh" | tail -n 1)"

venv="$cache/test-$(sha256sum "$here/requirements-test.txt" | cut -c1-12)"
if [[ ! -x "$venv/bin/python" || ! -f "$venv/.done" ]]; then
	rm -rf "$venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install --quiet -r "$here/requirements-test.txt"
	touch "$venv/.done"
fi
sum="$(sha256sum "$wheel" | cut -c1-64)"
if [[ "$(cat "$venv/.wheel" 2>/dev/null || true)" != "$sum" ]]; then
	"$venv/bin/pip" install --quiet --no-deps --force-reinstall "$wheel"
	echo "$sum" >"$venv/.wheel"
else
	echo "test_wheel.sh: $(basename "$wheel") is already installed" >&2
fi

# PATH without Go: drop every directory that holds a go command.
nogo="$venv/bin"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	if [[ -n "$d" && ! -x "$d/go" && "$d" != "$venv/bin" ]]; then
		nogo="$nogo:$d"
	fi
done

cd "$here"
run() { env -u GOROOT -u GEOCOMPACT_BINARY PATH="$nogo" GEOCOMPACT_WHEEL_TEST=1 "$@"; }
run python -c 'import shutil, sys; sys.exit("go is still on PATH" if shutil.which("go") else 0)'
echo "==> mypy" >&2
run python -m mypy
echo "==> pytest" >&2
run python -m pytest -p no:cacheprovider "$@"
