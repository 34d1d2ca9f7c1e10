#!/usr/bin/env bash
# list-socket.sh OUT [ROUNDS] measures the in-memory list of ITEMS (100)
# pets over a real socket, embedded as the README shows, against the bare
# framework writing the same bytes with the same headers
# (examples/internal/listsocket -side lib|bare), on Gin, Fiber and net/http.
# Each server runs on CPU 0 and examples/loadgen (-mix list=1,update=0,
# identity: no Accept-Encoding) on CPU 1 (taskset), for DURATION (5s) at
# CONNS (8) connections, ROUNDS times (default 3) interleaved (lib, bare,
# per framework), each after waiting for a quiet machine. Output:
# OUT/list-socket/<framework>-<side>.r<round>.txt and one line per round
# and framework with both req/s and their ratio.
#
#   scripts/bench/list-socket.sh /tmp/bench 3
source "$(dirname "$0")/common.sh"
out=${1:?usage: list-socket.sh OUT [ROUNDS]}
rounds=${2:-3}
duration=${DURATION:-5s}
conns=${CONNS:-8}
items=${ITEMS:-100}
dir="$out/list-socket"
mkdir -p "$dir" "$out/bin"
(cd "$ROOT/examples" && go build -o "$out/bin/listsocket" ./internal/listsocket && go build -o "$out/bin/loadgen" ./loadgen)
machine "list-socket.sh $out $rounds" | tee "$dir/machine.txt"
key="sock-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
export INVENTORY_API_KEYS=$key INVENTORY_API_KEY=$key
trap stop_servers EXIT
port=$(free_port 18100)
rps() { sed -n 's/.* \([0-9.]*\) req\/s$/\1/p' "$1"; }
for r in $(seq "$rounds"); do
	for fw in gin fiber nethttp; do
		for side in lib bare; do
			f="$dir/$fw-$side.r$r.txt"
			wait_quiet >"$f"
			taskset -c 0 "$out/bin/listsocket" -framework "$fw" -side "$side" -addr "127.0.0.1:$port" -items "$items" 2>>"$dir/servers.log" &
			pids+=($!)
			for _ in $(seq 100); do
				curl -sf -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/inventory" && break
				sleep 0.1
			done
			taskset -c 1 "$out/bin/loadgen" -base-url "http://127.0.0.1:$port/v1" -mix list=1,update=0 \
				-connections "$conns" -duration "$duration" >>"$f"
			stop_servers
		done
		lib=$(rps "$dir/$fw-lib.r$r.txt") bare=$(rps "$dir/$fw-bare.r$r.txt")
		echo "round $r $fw: lib $lib req/s, bare $bare req/s, lib/bare $(awk -v a="$lib" -v b="$bare" 'BEGIN{printf "%.3f", a/b}')"
	done
done
