#!/usr/bin/env bash
# python/ray/test_ray.sh runs geocompact.ray on a real Ray cluster: Ray's
# test cluster (a head with no CPUs and two nodes of one CPU each), in a
# cached virtualenv holding the pinned Ray (requirements.txt). See
# python/ray/test_ray.py for the cases.
#
#   python/ray/test_ray.sh
#
# GEOCOMPACT_BINARY, when set, is the binary to test; else it is built.
# GEOCOMPACT_RAY_CACHE (default ~/.cache/geocompact/ray) holds the
# virtualenv, keyed by a hash of requirements.txt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${GEOCOMPACT_RAY_CACHE:-$HOME/.cache/geocompact/ray}"
mkdir -p "$cache"

venv="$cache/venv-$(sha256sum "$here/requirements.txt" | cut -c1-12)"
if [[ ! -x "$venv/bin/python" || ! -f "$venv/.done" ]]; then
	rm -rf "$venv"
	python3 -m venv "$venv" >&2
	"$venv/bin/pip" install --quiet -r "$here/requirements.txt" >&2
	touch "$venv/.done"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${GEOCOMPACT_BINARY:-}" ]]; then
	(cd "$root" && go build -o "$tmp/geocompact" ./cmd/geocompact)
	export GEOCOMPACT_BINARY="$tmp/geocompact"
fi
export PYTHONPATH="$root/python/src${PYTHONPATH:+:$PYTHONPATH}"
# The cluster stays on loopback, with no dashboard or usage report.
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_USAGE_STATS_ENABLED=0 RAY_DISABLE_DOCKER_CPU_WARNING=1
cd "$tmp"
"$venv/bin/python" "$here/test_ray.py"
