#!/usr/bin/env bash
# free-port.sh defines gc_free_port, sourced by the start scripts and
# .ci/run: it prints a loopback port nothing listens on.
#
#   . scripts/free-port.sh; port=$(gc_free_port start-s3.sh)
#
# The argument names the caller in the error when no port is found.
gc_free_port() {
	local p i
	for i in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	echo "${1:-free-port.sh}: no free port found" >&2
	return 1
}
