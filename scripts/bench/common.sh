# Shared helpers of the benchmark scripts; sourced, not run.
#
# Environment:
#   BENCH_MAX_LOAD  start a run only below this 1-minute load average (1.0)
#   BENCH_MAX_BUSY  and below this share of CPU time busy over 2 s (1: any)
#   BENCH_MAX_WAIT  seconds to wait for it before running anyway (300)
#   REDIS_PORT      loopback port of the private redis-server (6479)

set -euo pipefail

# The repository root, whichever directory the script is called from.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# busy prints the share of the machine's CPU time (0 to 1, all cores)
# that was not idle over the last 2 seconds.
busy() {
	local a b
	a=$(head -1 /proc/stat)
	sleep 2
	b=$(head -1 /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN {
		n = split(a, x, " "); split(b, y, " ")
		for (i = 2; i <= n; i++) { t += y[i] - x[i]; if (i == 5 || i == 6) idle += y[i] - x[i] }
		printf "%.2f", (t > 0 ? 1 - idle / t : 0)
	}'
}

# wait_quiet waits until the machine is quiet: the share of CPU time
# busy over 2 seconds below BENCH_MAX_BUSY and the 1-minute load average
# below BENCH_MAX_LOAD (other processes compete for the same cores), at
# most BENCH_MAX_WAIT seconds, then prints one line for the run's log:
# "# <time> load <1m> <5m> <15m> busy <share> (waited <s>s)".
wait_quiet() {
	local max=${BENCH_MAX_LOAD:-1.0} maxbusy=${BENCH_MAX_BUSY:-1} limit=${BENCH_MAX_WAIT:-300} start=$SECONDS load cpu
	while :; do
		load=$(cut -d' ' -f1 /proc/loadavg)
		cpu=$(busy)
		if awk -v l="$load" -v m="$max" -v c="$cpu" -v mc="$maxbusy" 'BEGIN { exit !(l < m && c < mc) }' || [ $((SECONDS - start)) -ge "$limit" ]; then
			break
		fi
		sleep 1
	done
	echo "# $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) busy $cpu (waited $((SECONDS - start))s)"
}

# pids holds the servers a script starts in the background; stop_servers
# stops them (and the EXIT trap of start_redis does, before its Redis).
pids=()
stop_servers() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
}

# start_redis starts a private redis-server on 127.0.0.1:$REDIS_PORT with
# no persistence, in a temporary directory, stops it (after the servers in
# pids) when the script exits, and exports REDIS_URL. Call it directly, not in a pipe or $(…),
# which would run it in a subshell. It fails if something already listens on
# the port, rather than benchmark someone else's Redis.
start_redis() {
	local port=${REDIS_PORT:-6479}
	if redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
		echo "something already answers on 127.0.0.1:$port; set REDIS_PORT to a free port" >&2
		return 1
	fi
	REDIS_DIR=$(mktemp -d)
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$REDIS_DIR" --daemonize no --logfile "$REDIS_DIR/redis.log" &
	REDIS_PID=$!
	trap 'stop_servers; kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; rm -rf "$REDIS_DIR"' EXIT
	for _ in $(seq 100); do
		redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
		sleep 0.1
	done
	export REDIS_URL="redis://127.0.0.1:$port/0"
	echo "# $(redis-server --version | cut -d' ' -f1-3) at $REDIS_URL (pid $REDIS_PID)"
}

# machine "CMD" prints what the figures were measured on, when, and by
# which command (the charts of plot/ quote these lines).
machine() {
	echo "# date $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "# command scripts/bench/$1"
	echo "# $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "# flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'sha_ni|avx2|aes' | tr '\n' ' ')"
	echo "# $(awk '/MemTotal/ { printf "%.0f GiB RAM", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
	echo "# $(go version)"
	echo "# commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
}

# free_port [FROM] prints the first loopback TCP port from FROM (default
# 20000) on which nothing accepts connections.
free_port() {
	local p=${1:-20000}
	while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do
		p=$((p + 1))
	done
	echo "$p"
}
