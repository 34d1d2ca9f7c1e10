#!/usr/bin/env bash
# list-load.sh OUT [ROUNDS] measures the list through examples/redis on a
# real Redis against bare Gin writing the same bytes. For each inventory
# size of ITEMS ("100 10000"), each round starts on loopback ports, fresh:
#
#   redis    examples/redis -framework gin on a private redis-server (see
#            common.sh), seeded with that many pets under a prefix of its own
#   bounded  the same with -max-staleness MAX_STALENESS (50ms), its own prefix
#   bare     examples/internal/bareserver: Gin answering GET /v1/inventory
#            with the bytes examples/redis answered (checked identical)
#   bare2    a second bareserver, the control: bare2 ÷ bare is what this
#            machine's noise alone makes of two identical servers
#
# then, for each server in turn, warms it with WARMUP (1s) of load not
# counted and runs examples/loadgen with -mix list=1,update=0 (nothing
# changes, so the library answers from its cached encoding after one GET
# of the version key) for DURATION (5s) at CONNS (8) connections, each
# run after waiting for a quiet machine; then stops the four. Odd rounds
# run redis, bounded, bare, bare2, even rounds the reverse, and every
# round has new processes: on a shared machine a run's rate drifts with
# time, and one process can stay faster than another of the same binary
# for minutes, so only many short interleaved rounds, each ratio taken
# within its round, tell servers a few per cent apart. Output:
# OUT/list-load/<server>.i<items>.r<round>.txt, one line per round with
# each req/s, the ratios to bare and the commands per second Redis
# answered during each Redis server's run (INFO commandstats, before and
# after; one process each, nothing else uses that Redis meanwhile), and
# one line per size with the median (lowest–highest) of each ratio.
#
#   scripts/bench/list-load.sh /tmp/bench 9
#
# ROUNDS is 5 by default. LIST_LOAD_PORTS ("18091 18092 18093 18094") are
# the servers' loopback ports (redis, bare, bounded, bare2); the script
# stops if something already listens there. common.sh's BENCH_MAX_LOAD and
# BENCH_MAX_BUSY say what a quiet machine is.
source "$(dirname "$0")/common.sh"
out=${1:?usage: list-load.sh OUT [ROUNDS]}
rounds=${2:-5}
duration=${DURATION:-5s}
warmup=${WARMUP:-1s}
conns=${CONNS:-8}
sizes=${ITEMS:-100 10000}
staleness=${MAX_STALENESS:-50ms}
read -r rport bport sport b2port <<<"${LIST_LOAD_PORTS:-18091 18092 18093 18094}" # examples/redis, bareserver, examples/redis -max-staleness, bareserver
declare -A port=([redis]=$rport [bare]=$bport [bounded]=$sport [bare2]=$b2port)
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
# start NAME ITEMS ROUND starts the server NAME of that round in the
# background and waits until it answers the list (byte-identical to the
# strict server's, which starts first and writes body.<items>.json).
start() {
	local name=$1 n=$2 r=$3 log="$dir/$1.i$2.r$3.log" p=${port[$1]}
	case $name in
	redis) "$out/bin/redis" -addr "127.0.0.1:$p" -framework gin -seed "$dir/seed.$n.json" \
		-redis-prefix "list-load-$n-r$r-$RANDOM" 2>"$log" & ;;
	bounded) "$out/bin/redis" -addr "127.0.0.1:$p" -framework gin -seed "$dir/seed.$n.json" -max-staleness "$staleness" \
		-redis-prefix "list-load-bounded-$n-r$r-$RANDOM" 2>"$log" & ;;
	bare | bare2) "$out/bin/bareserver" -addr "127.0.0.1:$p" -body "$dir/body.$n.json" 2>"$log" & ;;
	esac
	pids+=($!)
	wait_answer "$p" $! "$log"
	if [[ $name == redis ]]; then
		curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$p/v1/inventory" >"$dir/body.$n.json"
	else
		curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$p/v1/inventory" | cmp - "$dir/body.$n.json" ||
			{ echo "$name does not answer the same bytes as redis" >&2; exit 1; }
	fi
}
# median prints the median (lowest–highest) of its arguments.
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f (%.2f–%.2f)", m, v[1], v[NR]
	}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
for p in "${port[@]}"; do
	if curl -s -o /dev/null "http://127.0.0.1:$p/"; then
		echo "something already answers on 127.0.0.1:$p; set LIST_LOAD_PORTS to four free ports" >&2
		exit 1
	fi
done

status=0
for n in $sizes; do
	awk -v n="$n" 'BEGIN {
		split("available pending sold", st, " ")
		printf "["
		for (i = 1; i <= n; i++) printf "%s{\"petId\":%d,\"quantity\":%d,\"status\":\"%s\"}", (i > 1 ? "," : ""), i, (i * 7919) % 1000, st[i % 3 + 1]
		printf "]\n"
	}' >"$dir/seed.$n.json"
	declare -A ratios=([redis]="" [bounded]="" [bare2]="")
	for r in $(seq "$rounds"); do
		for s in redis bounded bare bare2; do start "$s" "$n" "$r"; done
		[[ $r == 1 ]] && echo "# items=$n: $(wc -c <"$dir/body.$n.json") bytes per list"
		order=(redis bounded bare bare2)
		((r % 2)) || order=(bare2 bare bounded redis)
		line="items=$n round $r/$rounds c=$conns:"
		declare -A rps=()
		for s in "${order[@]}"; do
			f="$dir/$s.i$n.r$r.txt"
			url="http://127.0.0.1:${port[$s]}/v1"
			"$out/bin/loadgen" -base-url "$url" -mix list=1,update=0 -connections "$conns" -duration "$warmup" >/dev/null 2>&1 || true
			wait_quiet | tee "$f"
			c0=$(commands) t0=$(date +%s.%N)
			"$out/bin/loadgen" -base-url "$url" -mix list=1,update=0 \
				-connections "$conns" -duration "$duration" >>"$f" 2>&1 || status=1
			c1=$(commands) t1=$(date +%s.%N)
			rps[$s]=$(grep '^requests' "$f" | grep -o '[0-9.]* req/s' | cut -d' ' -f1)
			line+=" $s ${rps[$s]} req/s"
			if [[ $s == redis || $s == bounded ]]; then
				cps=$(awk -v c="$((c1 - c0))" -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" 'BEGIN { printf "%.1f", c / t }')
				echo "# redis commands: $((c1 - c0)) in the run, $cps/s" >>"$f"
				line+=" ($cps Redis commands/s)"
			fi
		done
		for s in redis bounded bare2; do ratios[$s]+=" $(ratio "${rps[$s]}" "${rps[bare]}")"; done
		echo "$line, redis ÷ bare $(ratio "${rps[redis]}" "${rps[bare]}"), bounded ÷ bare $(ratio "${rps[bounded]}" "${rps[bare]}"), bare2 ÷ bare $(ratio "${rps[bare2]}" "${rps[bare]}")"
		stop_servers
	done
	# shellcheck disable=SC2086 # the ratios are words
	echo "items=$n over $rounds rounds, median (lowest–highest): bounded ÷ bare $(median ${ratios[bounded]}), redis ÷ bare $(median ${ratios[redis]}), bare2 ÷ bare (control) $(median ${ratios[bare2]})"
done
exit $status
