#!/usr/bin/env bash
# list-load.sh OUT [ROUNDS] measures the list through examples/redis on a
# real Redis against bare Gin writing the same bytes. For each inventory
# size of ITEMS ("100 10000") it starts, on loopback ports:
#
#   redis    examples/redis -framework gin on a private redis-server (see
#            common.sh), seeded with that many pets under a prefix of its own
#   bounded  the same with -max-staleness MAX_STALENESS (50ms), its own prefix
#   bare     examples/internal/bareserver: Gin answering GET /v1/inventory
#            with the bytes examples/redis answered (checked identical)
#
# then runs examples/loadgen with -mix list=1,update=0 (nothing changes, so
# the library answers from its cached encoding after one GET of the
# version key) against each for DURATION (10s) at CONNS (8) connections,
# ROUNDS times (default 3) interleaved (redis, bounded, bare, redis, …),
# each after waiting for a quiet machine. Output:
# OUT/list-load/<server>.i<items>.r<round>.txt, and one line per round
# with each req/s, the ratios to bare, and the commands per second Redis
# answered during each Redis server's run (INFO commandstats, before and
# after; one process each, nothing else uses that Redis meanwhile).
#
#   scripts/bench/list-load.sh /tmp/bench 3
#
# LIST_LOAD_PORTS ("18091 18092 18093") are the servers' loopback ports
# (redis, bare, bounded); the script stops if something already listens
# there.
source "$(dirname "$0")/common.sh"
out=${1:?usage: list-load.sh OUT [ROUNDS]}
rounds=${2:-3}
duration=${DURATION:-10s}
conns=${CONNS:-8}
sizes=${ITEMS:-100 10000}
staleness=${MAX_STALENESS:-50ms}
read -r rport bport sport <<<"${LIST_LOAD_PORTS:-18091 18092 18093}" # examples/redis, bareserver, examples/redis -max-staleness
dir="$out/list-load"
mkdir -p "$dir" "$out/bin"

(cd "$ROOT/examples" && go build -o "$out/bin/redis" ./redis && go build -o "$out/bin/bareserver" ./internal/bareserver &&
	go build -o "$out/bin/loadgen" ./loadgen)
machine "list-load.sh $out $rounds" | tee "$dir/machine.txt"
start_redis >>"$dir/machine.txt" # not in a pipe: it must run in this shell
tail -1 "$dir/machine.txt"

key="load-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
export INVENTORY_API_KEYS=$key INVENTORY_API_KEY=$key

wait_answer() { # wait_answer PORT PID LOG: until GET /v1/inventory answers 200
	for _ in $(seq 200); do
		curl -sf -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:$1/v1/inventory" && return 0
		kill -0 "$2" 2>/dev/null || { echo "the server for port $1 exited:" >&2; tail -5 "$3" >&2; return 1; }
		sleep 0.1
	done
	echo "nothing answers on port $1 (log: $3)" >&2
	return 1
}
# commands prints how many commands the private Redis has answered, INFO
# commandstats's own excepted.
commands() {
	redis-cli -h 127.0.0.1 -p "${REDIS_PORT:-6479}" info commandstats |
		awk -F'[:=,]' '/^cmdstat_/ && $1 != "cmdstat_info" { n += $3 } END { print n + 0 }'
}
for p in "$rport" "$bport" "$sport"; do
	if curl -s -o /dev/null "http://127.0.0.1:$p/"; then
		echo "something already answers on 127.0.0.1:$p; set LIST_LOAD_PORTS to two free ports" >&2
		exit 1
	fi
done

status=0
for n in $sizes; do
	seed="$dir/seed.$n.json"
	awk -v n="$n" 'BEGIN {
		split("available pending sold", st, " ")
		printf "["
		for (i = 1; i <= n; i++) printf "%s{\"petId\":%d,\"quantity\":%d,\"status\":\"%s\"}", (i > 1 ? "," : ""), i, (i * 7919) % 1000, st[i % 3 + 1]
		printf "]\n"
	}' >"$seed"
	"$out/bin/redis" -addr "127.0.0.1:$rport" -framework gin -seed "$seed" \
		-redis-prefix "list-load-$n-$RANDOM" 2>"$dir/redis.i$n.log" &
	pids+=($!)
	wait_answer "$rport" $! "$dir/redis.i$n.log"
	curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$rport/v1/inventory" >"$dir/body.$n.json"
	"$out/bin/redis" -addr "127.0.0.1:$sport" -framework gin -seed "$seed" -max-staleness "$staleness" \
		-redis-prefix "list-load-bounded-$n-$RANDOM" 2>"$dir/bounded.i$n.log" &
	pids+=($!)
	wait_answer "$sport" $! "$dir/bounded.i$n.log"
	curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$sport/v1/inventory" | cmp - "$dir/body.$n.json" ||
		{ echo "the bounded server does not answer the same bytes" >&2; exit 1; }
	"$out/bin/bareserver" -addr "127.0.0.1:$bport" -body "$dir/body.$n.json" 2>"$dir/bare.i$n.log" &
	pids+=($!)
	wait_answer "$bport" $! "$dir/bare.i$n.log"
	curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$bport/v1/inventory" | cmp - "$dir/body.$n.json" ||
		{ echo "bareserver does not answer the same bytes" >&2; exit 1; }
	echo "# items=$n: $(wc -c <"$dir/body.$n.json") bytes per list"
	for r in $(seq "$rounds"); do
		line="items=$n round $r/$rounds c=$conns:"
		declare -A rps=()
		for s in redis bounded bare; do
			port=$rport
			[[ $s == bare ]] && port=$bport
			[[ $s == bounded ]] && port=$sport
			f="$dir/$s.i$n.r$r.txt"
			wait_quiet | tee "$f"
			c0=$(commands) t0=$(date +%s.%N)
			"$out/bin/loadgen" -base-url "http://127.0.0.1:$port/v1" -mix list=1,update=0 \
				-connections "$conns" -duration "$duration" >>"$f" 2>&1 || status=1
			c1=$(commands) t1=$(date +%s.%N)
			rps[$s]=$(grep '^requests' "$f" | grep -o '[0-9.]* req/s' | cut -d' ' -f1)
			line+=" $s ${rps[$s]} req/s"
			if [[ $s != bare ]]; then
				cps=$(awk -v c="$((c1 - c0))" -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" 'BEGIN { printf "%.1f", c / t }')
				echo "# redis commands: $((c1 - c0)) in the run, $cps/s" >>"$f"
				line+=" ($cps Redis commands/s)"
			fi
		done
		echo "$line, redis ÷ bare $(awk -v a="${rps[redis]}" -v b="${rps[bare]}" 'BEGIN { printf "%.2f", a / b }')," \
			"bounded ÷ bare $(awk -v a="${rps[bounded]}" -v b="${rps[bare]}" 'BEGIN { printf "%.2f", a / b }')"
	done
	stop_servers
done
exit $status
