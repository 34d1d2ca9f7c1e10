#!/usr/bin/env bash
# inprocess.sh OUT [ROUNDS] runs the in-process benchmarks of gin, fiber
# and net/http (BenchmarkList, BenchmarkUpdate: lib, bare, bare+sha256)
# ROUNDS times (default 5), interleaved: each round runs every module once
# with -test.count 1, so lib and its baselines alternate run after run.
# Each run waits for a quiet machine (see common.sh) and writes
# OUT/inprocess/<module>.r<round>.txt, headed by the load it started at.
# Summarise with summary.sh OUT.
#
#   scripts/bench/inprocess.sh /tmp/bench 5
#
# BENCH_FLAGS adds test flags (e.g. "-test.benchtime 2s").
source "$(dirname "$0")/common.sh"
out=${1:?usage: inprocess.sh OUT [ROUNDS]}
rounds=${2:-5}
mkdir -p "$out/inprocess" "$out/bin"

declare -A dirs=([gin]=transport/gin [fiber]=transport/fiber [nethttp]=inventory)
for m in gin fiber nethttp; do
	(cd "$ROOT/${dirs[$m]}" && go test -c -o "$out/bin/$m.test" .)
done
machine "inprocess.sh $out $rounds" | tee "$out/inprocess/machine.txt"

for r in $(seq "$rounds"); do
	for m in gin fiber nethttp; do
		f="$out/inprocess/$m.r$r.txt"
		wait_quiet | tee "$f"
		# Run from the package directory, as go test does.
		(cd "$ROOT/${dirs[$m]}" && "$out/bin/$m.test" -test.run '^$' -test.bench . \
			-test.benchmem -test.count 1 ${BENCH_FLAGS:-}) | grep -E '^(Benchmark|ok|PASS|FAIL)' >>"$f"
		echo "round $r/$rounds $m: $(grep -c ^Benchmark "$f") results"
	done
done
