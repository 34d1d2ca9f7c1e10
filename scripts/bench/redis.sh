#!/usr/bin/env bash
# redis.sh OUT [ROUNDS] starts a private redis-server (see common.sh), runs
# TestRoundTrips against it once (OUT/redis/roundtrips.txt), then the
# Redis benchmarks (BenchmarkUpdate: api, store, raw with 32 callers, on
# distinct pets and one hot pet; BenchmarkList: 10, 1 000, 10 000 items,
# changed and unchanged; BenchmarkUpdateReplicaAcks, on a master and
# replica of its own) against it ROUNDS times (default 5) with -test.count 1, each run after
# waiting for a quiet machine, into OUT/redis/redis.r<round>.txt.
# Summarise with summary.sh OUT.
#
#   scripts/bench/redis.sh /tmp/bench 5
source "$(dirname "$0")/common.sh"
out=${1:?usage: redis.sh OUT [ROUNDS]}
rounds=${2:-5}
mkdir -p "$out/redis" "$out/bin"

(cd "$ROOT/storage/redis" && go test -c -o "$out/bin/redis.test" .)
machine "redis.sh $out $rounds" | tee "$out/redis/machine.txt"
start_redis >>"$out/redis/machine.txt" # not in a pipe: it must run in this shell
tail -1 "$out/redis/machine.txt"
pkg="$ROOT/storage/redis"

(cd "$pkg" && "$out/bin/redis.test" -test.run '^TestRoundTrips$' -test.v) | tee "$out/redis/roundtrips.txt"

for r in $(seq "$rounds"); do
	f="$out/redis/redis.r$r.txt"
	wait_quiet | tee "$f"
	(cd "$pkg" && "$out/bin/redis.test" -test.run '^$' -test.bench '/redis-server/' \
		-test.benchmem -test.count 1 ${BENCH_FLAGS:-}) | grep -E '^(Benchmark|ok|PASS|FAIL)' >>"$f"
	echo "round $r/$rounds: $(grep -c ^Benchmark "$f") results"
done
