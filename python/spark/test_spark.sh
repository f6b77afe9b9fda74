#!/usr/bin/env bash
# python/spark/test_spark.sh runs geocompact.spark on a real Spark cluster:
# master local-cluster[2,1,1024] (the driver starts two executor JVMs, one
# core each; no daemons), with the interop suite's virtualenv (pyspark
# 4.1.1, interop/setup.sh). See python/spark/test_spark.py for the cases.
#
#   python/spark/test_spark.sh
#
# GEOCOMPACT_BINARY, when set, is the binary to test; else it is built.
# Without Java or the virtualenv it fails (it never skips).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

command -v java >/dev/null || { echo "test_spark.sh: java is not installed (Spark needs it)" >&2; exit 1; }
eval "$("$root/interop/setup.sh")"
py="$GEOCOMPACT_INTEROP_PYTHON"
"$py" -c 'import pyspark' || { echo "test_spark.sh: pyspark is missing from $py" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${GEOCOMPACT_BINARY:-}" ]]; then
	(cd "$root" && go build -o "$tmp/geocompact" ./cmd/geocompact)
	export GEOCOMPACT_BINARY="$tmp/geocompact"
fi
export PYTHONPATH="$root/python/src${PYTHONPATH:+:$PYTHONPATH}"
export PYSPARK_PYTHON="$py" PYSPARK_DRIVER_PYTHON="$py"
# Keep the cluster's traffic on loopback.
export SPARK_LOCAL_IP=127.0.0.1
cd "$tmp"
"$py" "$here/test_spark.py"
