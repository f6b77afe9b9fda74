#!/usr/bin/env bash
# python/spark/bench_spark.sh measures the rewrite on Spark
# (local-cluster[2,1,1024]: two executor JVMs, one core each) against
# geocompact rewrite on a twin table, in one run; see bench_spark.py. The
# figures are in docs/scale-out.md.
#
#   python/spark/bench_spark.sh [--rows N] [--files N] [--buckets N] [--json FILE]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

command -v java >/dev/null || { echo "bench_spark.sh: java is not installed (Spark needs it)" >&2; exit 1; }
eval "$("$root/interop/setup.sh")"
py="$GEOCOMPACT_INTEROP_PYTHON"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${GEOCOMPACT_BINARY:-}" ]]; then
	(cd "$root" && go build -o "$tmp/geocompact" ./cmd/geocompact)
	export GEOCOMPACT_BINARY="$tmp/geocompact"
fi
export PYTHONPATH="$root/python/src${PYTHONPATH:+:$PYTHONPATH}"
export PYSPARK_PYTHON="$py" PYSPARK_DRIVER_PYTHON="$py" SPARK_LOCAL_IP=127.0.0.1
cd "$tmp"
"$py" "$here/bench_spark.py" "$@"
