#!/usr/bin/env bash
# python/build_wheel.sh builds the geocompact wheel: the Go binary compiled
# for one platform (CGO off, so it needs no C library), carried as the
# wheel's geocompact script, with the Python module beside it, tagged for
# that platform as native-binary wheels are.
#
#   python/build_wheel.sh                    # the host's platform
#   python/build_wheel.sh linux/arm64 darwin/arm64 ...
#
# Platforms: linux/amd64, linux/arm64, darwin/amd64, darwin/arm64. Wheels
# go to python/dist (GEOCOMPACT_WHEEL_DIR to change it); the path of each
# is printed on stdout. The version is the repository's VERSION file, linked
# into the binary as main.version and read by the build backend.
#
# The first build compiles every dependency with the Glue and Hive catalogs
# in (about 10 minutes on 2 cores; later builds reuse Go's build cache): a
# line on stderr every 30 seconds says it is still compiling. To wrap a
# binary built already for the host platform, name it in
# GEOCOMPACT_WHEEL_PREBUILT; it must be a build of this tree (its
# --version is checked against VERSION).
#
# The build front end and backend are pinned (requirements-build.txt) in a
# virtualenv cached under GEOCOMPACT_PYTHON_CACHE (default
# ~/.cache/geocompact/python); a rerun installs nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cache="${GEOCOMPACT_PYTHON_CACHE:-$HOME/.cache/geocompact/python}"
out="${GEOCOMPACT_WHEEL_DIR:-$here/dist}"
version="$(tr -d '[:space:]' <"$root/VERSION")"

venv="$cache/build-$(sha256sum "$here/requirements-build.txt" | cut -c1-12)"
if [[ ! -x "$venv/bin/python" || ! -f "$venv/.done" ]]; then
	rm -rf "$venv"
	mkdir -p "$cache"
	python3 -m venv "$venv" >&2
	"$venv/bin/pip" install --quiet -r "$here/requirements-build.txt" >&2
	touch "$venv/.done"
fi

# tag GOOS/GOARCH prints the wheel platform tag. A static Go binary runs on
# any glibc or musl Linux, and Go 1.26 needs macOS 12.
tag() {
	case "$1" in
	linux/amd64) echo "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64" ;;
	linux/arm64) echo "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64" ;;
	darwin/amd64) echo "macosx_12_0_x86_64" ;;
	darwin/arm64) echo "macosx_12_0_arm64" ;;
	*)
		echo "build_wheel.sh: platform $1: want linux/amd64, linux/arm64, darwin/amd64 or darwin/arm64" >&2
		return 2
		;;
	esac
}

# wait_for PID SECONDS waits up to SECONDS for PID to exit; false while it
# still runs.
wait_for() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

platforms=("$@")
if [[ ${#platforms[@]} -eq 0 ]]; then
	platforms=("$(cd "$root" && go env GOOS)/$(cd "$root" && go env GOARCH)")
fi
mkdir -p "$out"
for p in "${platforms[@]}"; do
	platform_tag="$(tag "$p")"
	# A private directory per build, so that builds may run side by side.
	work="$(mktemp -d)"
	if [[ -n "${GEOCOMPACT_WHEEL_PREBUILT:-}" ]]; then
		host="$(cd "$root" && go env GOOS)/$(cd "$root" && go env GOARCH)"
		if [[ "$p" != "$host" ]]; then
			echo "build_wheel.sh: GEOCOMPACT_WHEEL_PREBUILT is a $host binary; cannot wrap it for $p" >&2
			exit 2
		fi
		got="$("$GEOCOMPACT_WHEEL_PREBUILT" --version | head -1)"
		if [[ "$got" != "geocompact $version" ]]; then
			echo "build_wheel.sh: $GEOCOMPACT_WHEEL_PREBUILT says \"$got\", want \"geocompact $version\" (build it with -ldflags \"-X main.version=$version\")" >&2
			exit 2
		fi
		echo "build_wheel.sh: wrapping $GEOCOMPACT_WHEEL_PREBUILT ($version)" >&2
		mkdir -p "$work/bin" && cp "$GEOCOMPACT_WHEEL_PREBUILT" "$work/bin/geocompact"
	else
		echo "build_wheel.sh: go build $p ($version)" >&2
		# The wheel keeps the Glue and Hive catalogs that docs/python.md lists.
		(cd "$root" && GOOS="${p%/*}" GOARCH="${p#*/}" CGO_ENABLED=0 go build -trimpath -tags 'glue hive' \
			-ldflags "-s -w -X main.version=$version" -o "$work/bin/geocompact" ./cmd/geocompact) &
		build=$!
		start=$SECONDS
		while ! wait_for "$build" 30; do
			echo "build_wheel.sh: still compiling $p ($((SECONDS - start))s)" >&2
		done
		wait "$build"
	fi
	(cd "$here" && GEOCOMPACT_WHEEL_PLATFORM="$platform_tag" GEOCOMPACT_WHEEL_BINARY="$work/bin/geocompact" \
		"$venv/bin/python" -m build --wheel --no-isolation --outdir "$work/dist" . >&2)
	wheel="$(ls "$work"/dist/*.whl)"
	mv "$wheel" "$out/"
	rm -rf "$work"
	echo "$out/$(basename "$wheel")"
done
