#!/usr/bin/env bash
# bench-sort.sh: wall time and peak RSS of the ways of rewriting one
# generated table, side by side in one run, in alternating rounds, with
# medians: iceberg-go's binpack, geocompact's binpack, Hilbert at defaults,
# and the same Hilbert group in memory and spilled at several budgets.
#
#   scripts/bench-sort.sh [--rows N] [--commits K] [--target BYTES]
#                         [--rounds R] [--ways a,b,...] [--dir DIR]
#
# Defaults: 1,500,000 clustered points in 300 commits, 1 MiB target files,
# three rounds, every way, in /tmp/geocompact-bench-sort. Every run starts
# from the same warehouse, restored byte for byte at the same path (the
# embedded catalog records absolute paths, so a copy elsewhere would read
# and write the original's files). Each way runs as a process of its own
# under /usr/bin/time; iceberg-go's binpack runs in the cmd/geocompact test
# binary (GEOCOMPACT_TEST_AS_ICEBERG_BINPACK), built with the arrowzstd tag
# so that its pages are compressed by arrow-go's codec, as it ships. Results: DIR/runs.tsv (one
# line per run) and the summary on standard output: wall time, CPU time
# (user + system, which other work on the machine disturbs less) and peak
# RSS, medians, the ratios of both times, and each Hilbert way's throughput
# against binpack's (binpack's time over its).
set -euo pipefail

rows=1500000 commits=300 target=1048576 rounds=3 pick="" dir=/tmp/geocompact-bench-sort
while [ $# -gt 0 ]; do
	case "$1" in
	--rows) rows=$2; shift 2 ;;
	--commits) commits=$2; shift 2 ;;
	--target) target=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--ways) pick=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	*) echo "bench-sort.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir/bin"
# The commit measured is the one built, whatever the tree holds by the end.
commit="$(cd "$root" && git rev-parse --short HEAD)$(cd "$root" && git diff --quiet HEAD || echo '+changes')"
# iceberg-go's binpack runs as it ships: its pages compressed by arrow-go's
# zstd codec (at zstd's default level), not by geocompact's.
(cd "$root" && go build -o "$dir/bin/geocompact" ./cmd/geocompact && go test -c -tags arrowzstd -o "$dir/bin/geocompact.test" ./cmd/geocompact)
gc=$dir/bin/geocompact
wh=$dir/wh
table=bench.pings

rm -rf "$wh"
"$gc" --warehouse "$wh" -q generate --table "$table" --rows "$rows" --commits "$commits" --distribution clustered --seed 3 >/dev/null
parquet=$(find "$wh" -name '*.parquet' -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')
tar -C "$dir" -cf "$dir/pristine.tar" wh

mib=$((1 << 20))
rw="rewrite --table $table --option rewrite-all=true --option target-file-size-bytes=$target"
ways=(
	"iceberg-go-binpack|"
	"binpack|$rw"
	"hilbert|$rw --curve hilbert"
	"hilbert-in-memory|$rw --curve hilbert --option max-group-memory-bytes=$((16 << 30))"
)
for b in 64 128 256 512; do
	ways+=("hilbert-${b}MiB|$rw --curve hilbert --option max-group-memory-bytes=$((b * mib))")
done

runs=$dir/runs.tsv
printf 'round\tway\tseconds\tpeak_kib\tcpu_seconds\n' >"$runs"
for round in $(seq 1 "$rounds"); do
	for w in "${ways[@]}"; do
		name=${w%%|*} args=${w#*|}
		if [ -n "$pick" ] && [[ ",$pick," != *",$name,"* ]]; then
			continue
		fi
		rm -rf "$wh"
		tar -C "$dir" -xf "$dir/pristine.tar"
		sync
		if [ -z "$args" ]; then
			cmd=(env "GEOCOMPACT_TEST_AS_ICEBERG_BINPACK=$wh|$table|$target" "$dir/bin/geocompact.test")
		else
			# shellcheck disable=SC2206 # the arguments hold no spaces
			cmd=("$gc" --warehouse "$wh" -q $args)
		fi
		if ! /usr/bin/time -f '%e %M %U %S' -o "$dir/time.out" "${cmd[@]}" >"$dir/run.log" 2>&1; then
			echo "bench-sort.sh: $name failed:" >&2
			cat "$dir/run.log" >&2
			exit 1
		fi
		read -r secs kib usr sys <"$dir/time.out"
		cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
		printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$name" "$secs" "$kib" "$cpu" >>"$runs"
		printf 'round %s  %-20s %7.2f s %7.2f CPU-s %6d MiB\n' "$round" "$name" "$secs" "$cpu" $((kib / 1024)) >&2
	done
done
rm -rf "$wh"

echo "# $rows rows in $commits commits, $((parquet / mib)) MiB of Parquet, target $target bytes, $rounds rounds"
echo "# commit $commit, $(date -u '+%Y-%m-%d %H:%M UTC'), load:$(uptime | sed 's/.*load average://')"
awk -F'\t' '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
NR > 1 {
	if (!($2 in n)) order[++ways] = $2
	n[$2]++; s[$2, n[$2]] = $3; m[$2, n[$2]] = $4 / 1024; u[$2, n[$2]] = $5
	all[$2] = all[$2] (all[$2] == "" ? "" : ", ") $3
	allc[$2] = allc[$2] (allc[$2] == "" ? "" : ", ") $5
}
function ratio(label, a, b) {
	printf "%s: %.2fx time, %.2fx CPU\n", label, t[a] / t[b], c[a] / c[b]
}
END {
	printf "%-20s %9s %9s %9s  %s\n", "way", "median s", "CPU-s", "peak MiB", "runs (s; CPU-s)"
	for (w = 1; w <= ways; w++) {
		k = order[w]; delete ts; delete ms; delete cs
		for (i = 1; i <= n[k]; i++) { ts[i] = s[k, i]; ms[i] = m[k, i]; cs[i] = u[k, i] }
		t[k] = median(ts, n[k]); r[k] = median(ms, n[k]); c[k] = median(cs, n[k])
		printf "%-20s %9.2f %9.2f %9.0f  %s; %s\n", k, t[k], c[k], r[k], all[k], allc[k]
	}
	print ""
	if (("binpack" in t) && ("iceberg-go-binpack" in t)) ratio("binpack / iceberg-go binpack", "binpack", "iceberg-go-binpack")
	if (("binpack" in t) && ("hilbert" in t)) ratio("hilbert at defaults / binpack", "hilbert", "binpack")
	if ("hilbert-in-memory" in t) for (w = 1; w <= ways; w++) if (order[w] ~ /MiB$/)
		ratio(order[w] " / in memory", order[w], "hilbert-in-memory")
	# Rows per second of each sorted way against the unsorted rewrite.
	if ("binpack" in t) for (w = 1; w <= ways; w++) if (order[w] ~ /^hilbert/)
		printf "%s throughput against binpack: %.2fx\n", order[w], t["binpack"] / t[order[w]]
}' "$runs"
