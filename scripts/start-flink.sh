#!/usr/bin/env bash
# start-flink.sh starts Apache Beam's Flink job server (Flink embedded, run
# as a local mini cluster) on a free loopback port, for geocompact-beam's
# portable-runner tests and for trying `geocompact-beam --runner flink`.
#
#   . scripts/start-flink.sh          # start and export the variables below into this shell
#   scripts/start-flink.sh            # start and print `export ...` lines (eval "$(scripts/start-flink.sh)")
#   scripts/start-flink.sh stop DIR   # stop the job server whose run directory is DIR
#   scripts/start-flink.sh fetch      # only fetch the job server's jar into the cache
#
# Exports GEOCOMPACT_TEST_PORTABLE_ENDPOINT (localhost:PORT, the job
# endpoint), GEOCOMPACT_TEST_PORTABLE_RUNNER=flink and GEOCOMPACT_FLINK_DIR
# (the run directory; its jobserver.pid and jobserver.log are there). Then:
#
#   geocompact-beam rewrite ... --runner flink --endpoint "$GEOCOMPACT_TEST_PORTABLE_ENDPOINT" \
#       --environment_type LOOPBACK
#
# Settings (environment):
#   GEOCOMPACT_FLINK_JAR      a job server jar to run (default: fetched, see below)
#   BEAM_FLINK_VERSION        Flink version of the job server (default: 1.19)
#   BEAM_JOB_SERVER_VERSION   Beam version of the job server (default: 2.73.0)
#   GEOCOMPACT_FLINK_PORT     job port (default: a free one)
#   GEOCOMPACT_FLINK_DIR      run directory (default: a new temporary directory)
#   GEOCOMPACT_FLINK_HEAP     the JVM's -Xmx (default: 1g)
#   GEOCOMPACT_CACHE          cache folder (default: ~/.cache/geocompact)
#
# The jar, org.apache.beam:beam-runners-flink-$BEAM_FLINK_VERSION-job-server,
# is fetched with Maven's own client into $GEOCOMPACT_CACHE/flink when it is
# missing, never into the repository. When the Maven repository does not
# serve it, the script says so and exits 1: give GEOCOMPACT_FLINK_JAR.

_gc_flink_jar() {
	local cache="$1" flinkv="$2" beamv="$3"
	local name="beam-runners-flink-$flinkv-job-server"
	local jar="$cache/flink/$name-$beamv.jar"
	if [ -s "$jar" ]; then
		echo "$jar"
		return 0
	fi
	if ! command -v mvn >/dev/null; then
		echo "start-flink.sh: mvn is not installed; it fetches $name:$beamv (or give GEOCOMPACT_FLINK_JAR)" >&2
		return 1
	fi
	mkdir -p "$cache/flink"
	echo "start-flink.sh: fetching org.apache.beam:$name:$beamv into $cache/flink" >&2
	if ! mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
		"-Dartifact=org.apache.beam:$name:$beamv:jar" "-DoutputDirectory=$cache/flink" >&2 ||
		[ ! -s "$jar" ]; then
		echo "start-flink.sh: the Maven repository did not serve org.apache.beam:$name:$beamv;" \
			"set BEAM_FLINK_VERSION/BEAM_JOB_SERVER_VERSION to a served one, or GEOCOMPACT_FLINK_JAR to a jar" >&2
		return 1
	fi
	echo "$jar"
}

_gc_flink_main() {
	local cache="${GEOCOMPACT_CACHE:-${HOME:-/root}/.cache/geocompact}"
	local flinkv="${BEAM_FLINK_VERSION:-1.19}" beamv="${BEAM_JOB_SERVER_VERSION:-2.73.0}"

	case "${1:-}" in
	stop)
		local dir="${2:-${GEOCOMPACT_FLINK_DIR:-}}"
		if [ -z "$dir" ] || [ ! -f "$dir/jobserver.pid" ]; then
			echo "start-flink.sh: no job server to stop (give its run directory)" >&2
			return 1
		fi
		local pid i
		pid="$(cat "$dir/jobserver.pid")"
		kill "$pid" 2>/dev/null || true
		for i in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$dir/jobserver.pid"
		return 0
		;;
	fetch)
		_gc_flink_jar "$cache" "$flinkv" "$beamv" >/dev/null
		return
		;;
	esac

	if ! command -v java >/dev/null; then
		echo "start-flink.sh: java is not installed (the job server needs Java 11 or 17)" >&2
		return 1
	fi
	local jar="${GEOCOMPACT_FLINK_JAR:-}"
	if [ -z "$jar" ]; then
		jar="$(_gc_flink_jar "$cache" "$flinkv" "$beamv")" || return 1
	elif [ ! -s "$jar" ]; then
		echo "start-flink.sh: GEOCOMPACT_FLINK_JAR=$jar is not a file" >&2
		return 1
	fi

	local dir="${GEOCOMPACT_FLINK_DIR:-}"
	if [ -z "$dir" ]; then
		dir="$(mktemp -d "${TMPDIR:-/tmp}/geocompact-flink.XXXXXX")"
	fi
	mkdir -p "$dir/artifacts"

	local attempt pid port ok=""
	for attempt in 1 2 3; do
		port="${GEOCOMPACT_FLINK_PORT:-}"
		if [ -z "$port" ]; then
			port=$(gc_free_port start-flink.sh) || return 1
		fi
		# --flink-master [local]: Flink runs inside the job server's JVM.
		nohup java "-Xmx${GEOCOMPACT_FLINK_HEAP:-1g}" -jar "$jar" \
			--flink-master '[local]' --job-host 127.0.0.1 --job-port "$port" \
			--artifact-port 0 --expansion-port 0 --artifacts-dir "$dir/artifacts" \
			--clean-artifacts-per-job true \
			>"$dir/jobserver.log" 2>&1 </dev/null &
		pid=$!
		local i
		for i in $(seq 1 600); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				ok=1
				break
			fi
			sleep 0.1
		done
		[ -n "$ok" ] && break
		kill "$pid" 2>/dev/null || true
		[ -n "${GEOCOMPACT_FLINK_PORT:-}" ] && break
	done
	if [ -z "$ok" ]; then
		echo "start-flink.sh: the Flink job server did not start; its log:" >&2
		tail -n 50 "$dir/jobserver.log" >&2
		return 1
	fi
	echo "$pid" >"$dir/jobserver.pid"

	cat >"$dir/flink.env" <<EOF
export GEOCOMPACT_TEST_PORTABLE_ENDPOINT=localhost:$port
export GEOCOMPACT_TEST_PORTABLE_RUNNER=flink
export GEOCOMPACT_FLINK_DIR=$dir
EOF
	_GC_FLINK_ENV="$dir/flink.env"
	echo "start-flink.sh: Beam's Flink job server (pid $pid, $(basename "$jar")) listens on localhost:$port; run directory $dir" >&2
}

# gc_free_port prints a loopback port nothing listens on.
# shellcheck source=free-port.sh
. "$(dirname "${BASH_SOURCE[0]}")/free-port.sh"

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
	# Sourced: export into the caller's shell.
	_GC_FLINK_ENV=""
	if _gc_flink_main "$@"; then
		# shellcheck disable=SC1090
		[ -z "$_GC_FLINK_ENV" ] || . "$_GC_FLINK_ENV"
	else
		return 1
	fi
else
	set -euo pipefail
	_GC_FLINK_ENV=""
	_gc_flink_main "$@"
	[ -z "$_GC_FLINK_ENV" ] || cat "$_GC_FLINK_ENV"
fi
