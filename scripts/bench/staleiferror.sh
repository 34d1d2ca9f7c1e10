#!/usr/bin/env bash
# staleiferror.sh OUT [ROUNDS] runs BenchmarkListStaleIfError (package
# inventory: the list of 100 pets on a healthy memstore through net/http,
# with inventory.WithStaleIfError(30s) "on", without it "off", and "off2",
# off built again as the control; strict and under a 50 ms staleness
# bound) ROUNDS times (9), each with -test.count 1 after waiting for a
# quiet machine, so that the sides of a round run one after the other and
# each ratio is taken within a round. Output: OUT/staleiferror/r<round>.txt,
# one line per round and mode with off ns/op ÷ on ns/op and off2 ÷ on
# (the fraction of the throughput without the option that the option
# keeps, against the side before it and the side after it: the first side
# of a round runs colder), off ÷ off2 (the noise, position included) and
# the sides' allocations, then the medians.
#
#   scripts/bench/staleiferror.sh /tmp/bench 9
source "$(dirname "$0")/common.sh"
out=${1:?usage: staleiferror.sh OUT [ROUNDS]}
rounds=${2:-9}
benchtime=${BENCHTIME:-1s}
dir="$out/staleiferror"
mkdir -p "$dir" "$out/bin"
(cd "$ROOT" && go test -c -o "$out/bin/inventory.test" ./inventory)
machine "staleiferror.sh $out $rounds" | tee "$dir/machine.txt"
# field NAME UNIT FILE prints the value before UNIT on NAME's line.
field() { awk -v n="$1" -v u="$2" '$1 ~ n { for (i = 2; i <= NF; i++) if ($i == u) print $(i - 1) }' "$3"; }
for r in $(seq "$rounds"); do
	f="$dir/r$r.txt"
	wait_quiet | tee "$f"
	(cd "$dir" && "$out/bin/inventory.test" -test.run '^$' -test.bench '^BenchmarkListStaleIfError$' \
		-test.benchmem -test.count 1 -test.benchtime "$benchtime") >>"$f" 2>&1
	for m in strict bound50ms; do
		side() { echo "/$m/$1(-[0-9]+)?\$"; } # the benchmark's name, with or without its -GOMAXPROCS
		off=$(field "$(side off)" ns/op "$f") on=$(field "$(side on)" ns/op "$f") off2=$(field "$(side off2)" ns/op "$f")
		aoff=$(field "$(side off)" allocs/op "$f") aon=$(field "$(side on)" allocs/op "$f")
		awk -v r="$r" -v m="$m" -v a="$off" -v b="$on" -v c="$off2" -v x="$aoff" -v y="$aon" 'BEGIN {
			printf "round %d %s: off %s ns/op, on %s, off2 %s; off ÷ on %.3f; off2 ÷ on %.3f; off ÷ off2 %.3f; allocs/op off %s on %s\n", r, m, a, b, c, a / b, c / b, a / c, x, y }'
	done
done | tee "$dir/rounds.txt"
for m in strict bound50ms; do
	for what in "off ÷ on" "off2 ÷ on" "off ÷ off2"; do
		grep " $m:" "$dir/rounds.txt" | awk -v w="$what" '{ split($0, p, w " "); split(p[2], q, ";"); print q[1] }' |
			sort -g | awk -v m="$m" -v w="$what" '{ v[NR] = $1 } END {
			med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "median %s %s: %s (%s–%s), %d rounds\n", m, w, med, v[1], v[NR], NR }'
	done
done | tee "$dir/medians.txt"
