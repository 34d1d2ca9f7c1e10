#!/usr/bin/env bash
# load.sh OUT [ROUNDS] builds examples/gin (memory store), examples/redis
# and examples/loadgen, starts a private redis-server (see common.sh) and
# three servers on loopback ports:
#
#   gin          examples/gin                    (Gin, memory store; logs a line per request)
#   redis-gin    examples/redis -framework gin   (Gin, Redis store)
#   redis-fiber  examples/redis -framework fiber (Fiber, Redis store)
#
# then runs loadgen against each for DURATION (10s) at each connection
# count of CONNS ("8 64"), with the default mix (1 list for 9 updates),
# ROUNDS times (default 3) interleaved (round 1: every server and count,
# round 2: again, …), each after waiting for a quiet machine. Output:
# OUT/load/<server>.c<conns>.r<round>.txt. The generator, the servers and
# Redis share the machine's cores. Summarise with summary.sh OUT.
#
#   scripts/bench/load.sh /tmp/bench 3
source "$(dirname "$0")/common.sh"
out=${1:?usage: load.sh OUT [ROUNDS]}
rounds=${2:-3}
duration=${DURATION:-10s}
conns=${CONNS:-8 64}
mkdir -p "$out/load" "$out/bin"

for cmd in gin redis loadgen; do
	(cd "$ROOT/examples" && go build -o "$out/bin/$cmd" "./$cmd")
done
machine "load.sh $out $rounds" | tee "$out/load/machine.txt"
start_redis >>"$out/load/machine.txt" # not in a pipe: it must run in this shell
tail -1 "$out/load/machine.txt"

key="load-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
export INVENTORY_API_KEYS=$key INVENTORY_API_KEY=$key
declare -A port=([gin]=18081 [redis-gin]=18082 [redis-fiber]=18083)

# examples/gin logs a line per request (its host middleware): ~250 MB per
# full run, so that log is discarded; the Redis servers log no requests.
"$out/bin/gin" -addr "127.0.0.1:${port[gin]}" 2>/dev/null &
pids+=($!)
for fw in gin fiber; do
	"$out/bin/redis" -addr "127.0.0.1:${port[redis-$fw]}" -framework "$fw" \
		-redis-prefix "load-$fw" 2>"$out/load/redis-$fw.log" &
	pids+=($!)
done
for s in gin redis-gin redis-fiber; do
	for _ in $(seq 100); do
		curl -sf -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:${port[$s]}/v1/inventory" && break
		sleep 0.1
	done
	curl -sf -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:${port[$s]}/v1/inventory" ||
		{ echo "$s does not answer (logs: $out/load/*.log; run examples/gin by hand for its own)" >&2; exit 1; }
done

status=0
for r in $(seq "$rounds"); do
	for s in gin redis-gin redis-fiber; do
		for c in $conns; do
			f="$out/load/$s.c$c.r$r.txt"
			wait_quiet | tee "$f"
			"$out/bin/loadgen" -base-url "http://127.0.0.1:${port[$s]}/v1" \
				-connections "$c" -duration "$duration" >>"$f" 2>&1 || status=1
			echo "round $r/$rounds $s c=$c: $(grep '^requests' "$f")"
		done
	done
done
exit $status
