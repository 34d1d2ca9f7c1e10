#!/usr/bin/env bash
# staleness.sh OUT [ROUNDS] runs BenchmarkListStaleness
# (examples/internal/bareserver: the list of 100 and 10 000 pets through
# Gin on a redis-server of its own with a 50 ms staleness bound, strict,
# and bare Gin answering the same bytes from memory) ROUNDS times (5),
# each with -test.count 1 after waiting for a quiet machine, so that the
# three sides of a round run one after the other and each ratio is taken
# within a round. Output: OUT/staleness/r<round>.txt, one line per round
# and size with bare ns/op ÷ each side's (the fraction of bare Gin's
# throughput kept) and the bounded side's Redis list reads per 50 ms, then
# the medians.
#
#   scripts/bench/staleness.sh /tmp/bench 5
source "$(dirname "$0")/common.sh"
out=${1:?usage: staleness.sh OUT [ROUNDS]}
rounds=${2:-5}
benchtime=${BENCHTIME:-1s}
dir="$out/staleness"
mkdir -p "$dir" "$out/bin"
(cd "$ROOT/examples" && go test -c -o "$out/bin/bareserver.test" ./internal/bareserver)
machine "staleness.sh $out $rounds" | tee "$dir/machine.txt"
# field NAME UNIT FILE prints the value before UNIT on NAME's line.
field() { awk -v n="$1" -v u="$2" '$1 ~ n { for (i = 2; i <= NF; i++) if ($i == u) print $(i - 1) }' "$3"; }
for r in $(seq "$rounds"); do
	f="$dir/r$r.txt"
	wait_quiet | tee "$f"
	(cd "$dir" && "$out/bin/bareserver.test" -test.run '^$' -test.bench '^BenchmarkListStaleness$' \
		-test.benchmem -test.count 1 -test.benchtime "$benchtime") >>"$f" 2>&1
	for n in 100 10000; do
		bound=$(field "items=$n/bound50ms" ns/op "$f") strict=$(field "items=$n/strict" ns/op "$f")
		bare=$(field "items=$n/bare" ns/op "$f") reads=$(field "items=$n/bound50ms" reads/50ms "$f")
		awk -v r="$r" -v n="$n" -v a="$bound" -v s="$strict" -v b="$bare" -v x="$reads" 'BEGIN {
			printf "round %d items=%d: bound50ms %s ns/op, strict %s, bare %s; bare ÷ bound50ms %.2f, bare ÷ strict %.3f; %s reads/50ms\n", r, n, a, s, b, b / a, b / s, x }'
	done
done | tee "$dir/rounds.txt"
for n in 100 10000; do
	for what in "bare ÷ bound50ms" "bare ÷ strict" "reads/50ms"; do
		grep "items=$n:" "$dir/rounds.txt" | awk -v w="$what" '{
			if (w == "reads/50ms") { v = $(NF - 1) } else { split($0, p, w " "); split(p[2], q, /[,;]/); v = q[1] }
			print v }' | sort -g | awk -v n="$n" -v w="$what" '{ v[NR] = $1 } END {
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "median items=%d %s: %s (%s–%s)\n", n, w, m, v[1], v[NR] }'
	done
done | tee "$dir/medians.txt"
