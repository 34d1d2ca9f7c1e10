#!/usr/bin/env bash
# million.sh OUT measures examples/redis at inventory sizes up to a million
# pets on a private redis-server, against its baselines:
#
#   project    examples/redis -framework gin, seeded with N pets from a
#              file of examples/genseed, under a key prefix of its own
#   yardstick  examples/internal/yardstick: Gin answering the list with the
#              bytes the project answered (checked identical) from memory,
#              and updates with WATCH/HGET/MULTI/HSET/XADD/EXEC on Redis
#              (the store's change-stream layout), under its own prefix
#   bare       examples/internal/bareserver: Gin writing the same bytes
#   bare-gzip  the same behind gin-contrib/gzip (default level), as a team
#              would compress the list: the whole body again per request
#
# For each size of PETS ("1000 10000 100000 1000000"), in this order:
#
#   1. SLOWLOG RESET (threshold 1 ms), then start the project with -seed
#      and wait for /readyz (the seed is in): "ready" is that time;
#   2. LISTS (5) unchanged lists, one at a time: their median time is
#      "list"; then, on the same state, one list accepting gzip: its body
#      size ("gz", as received) and, when it is gzip, a check that it
#      decodes to the identity list (the script fails when it does not);
#      and, when it carried an ETag, the same list with If-None-Match: its
#      status ("304" expected);
#   3. one update, then one list: "after" (the first list after a
#      change), and the server's VmRSS once it is answered ("rss1");
#   4. one update, then 8 lists in parallel (all of a version no list has
#      encoded yet, the case where every list in flight could build a body
#      of its own), sampling the server's VmRSS every 20 ms while any is in
#      flight: the largest sample is "rss8" (VmHWM is logged too, but it is
#      the peak since start, seeding included, so it cannot isolate them);
#   4b. the same as 3 and 4 with lists accepting gzip: "rss1gz", "rss8gz";
#   5. update latency: loadgen -mix update only at UPDATE_RATE/s (200) for
#      PHASE (10s) over UPDATE_CONNS (16) connections, latency counted from
#      when each update was due; alone, then while a second loadgen lists
#      at 4/s over 4 connections ("4 clients each listing once a second");
#      project and yardstick interleaved, ROUNDS (1) times:
#      project alone, yardstick alone, project with lists, yardstick with
#      lists;
#   6. req/s of an unchanged list: loadgen list only, closed loop, CONNS (4)
#      connections, RPS_PHASE (10s), project then bare; then lists accepting
#      gzip (loadgen -gzip: bytes counted as received) from the project, the
#      yardstick (one Redis round trip, then precompressed bytes) and
#      bare-gzip; then conditional lists (loadgen -gzip -conditional: each
#      connection revalidates its last list) from the project and the
#      yardstick (one round trip, then 304), with the count of 304s;
#   7. SLOWLOG GET: the longest command of the run that was not the
#      yardstick's (its client is named "yardstick"); the project's seeding
#      counts.
#
# Output: OUT/million/ holds every raw file; one summary line per size
# on standard output, and OUT/million/million.tsv with one line per size
# (the columns are named in its header) for scripts/bench/plot. Every
# list and update must be answered 200: the script exits 1 when one was
# not (503s and timeouts are counted and reported, not fatal: the other
# measurements and sizes still run), when a list does not hold every pet,
# when a gzip list does not decode to the identity list of the same state,
# or when a server does not start; it asserts no timing. A server that
# answers identity to a list accepting gzip, or sends no ETag, is reported
# as such (gz_coding identity, etag no), not failed. The rest of a
# size's measurements need the bytes of one list answered 200; when none
# was, the baselines serve the seed file's items, which the API encodes
# identically (the script checks that where both exist). A quick run
# (what CI runs):
#
#   PETS=100000 PHASE=3s RPS_PHASE=3s BENCH_MAX_WAIT=0 scripts/bench/million.sh /tmp/m
#
# Ports: a free one from 20000 up for Redis (unless REDIS_PORT is set) and
# for each server. READY_TIMEOUT (900) bounds the wait for /readyz, in s.
source "$(dirname "$0")/common.sh"
out=${1:?usage: million.sh OUT}
sizes=${PETS:-1000 10000 100000 1000000}
phase=${PHASE:-10s}
rps_phase=${RPS_PHASE:-10s}
rate=${UPDATE_RATE:-200}
uconns=${UPDATE_CONNS:-16}
conns=${CONNS:-4}
nlists=${LISTS:-5}
rounds=${ROUNDS:-1}
ready_timeout=${READY_TIMEOUT:-900}
list_timeout=${LIST_TIMEOUT:-60s}
dir="$out/million"
bin="$out/bin"
mkdir -p "$dir" "$bin"

(cd "$ROOT/examples" && for c in redis loadgen genseed internal/bareserver internal/yardstick; do
	go build -o "$bin/$(basename "$c")" "./$c"
done)
export REDIS_PORT=${REDIS_PORT:-$(free_port 20000)}
machine "million.sh $out" >"$dir/machine.txt"
start_redis >>"$dir/machine.txt" # not in a pipe: it must run in this shell
cat "$dir/machine.txt"
rcli() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }
rcli CONFIG SET slowlog-log-slower-than 1000 >/dev/null
rcli CONFIG SET slowlog-max-len 100000 >/dev/null

key="million-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
export INVENTORY_API_KEYS=$key INVENTORY_API_KEY=$key

# get URL FILE [HEADER…]: one authorized GET into FILE (the body as
# received, not decompressed) with the extra request headers; prints
# "<status> <seconds>". The answer's headers go to FILE.h when FILE is not
# /dev/null.
get() {
	local url=$1 file=$2 hdr=/dev/null h=()
	shift 2
	for x in "$@"; do h+=(-H "$x"); done
	[ "$file" = /dev/null ] || hdr="$file.h"
	curl -s -o "$file" -D "$hdr" -w '%{http_code} %{time_total}\n' --max-time 120 -H "Authorization: Bearer $key" "${h[@]}" "$url" || echo "000 0"
}
# header FILE NAME: the value of a response header saved by get.
header() { tr -d '\r' <"$1.h" | awk -v n="$(echo "$2" | tr 'A-Z' 'a-z')" -F': ' 'tolower($1) == n { print $2 }' | tail -1; }
# wait_for URL PID LOG SECONDS: until URL answers 200, PID alive.
wait_for() {
	local deadline=$((SECONDS + $4))
	while [ "$SECONDS" -lt "$deadline" ]; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $key" "$1")" = 200 ] && return 0
		kill -0 "$2" 2>/dev/null || { echo "the server of $1 exited:" >&2; tail -5 "$3" >&2; return 1; }
		sleep 0.1
	done
	echo "$1 did not answer 200 within $4 s (log: $3)" >&2
	return 1
}
# update ID QUANTITY: one PATCH of the project, counted when not 200.
update() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 -X PATCH -H "Authorization: Bearer $key" \
		-H 'Content-Type: application/json' -d "{\"quantity\":$2}" "$base/inventory/$1") || code=000
	[ "$code" = 200 ] || bad_updates=$((bad_updates + 1))
}
# slowlog prints one line per SLOWLOG entry: "<µs> <client name or -> <command>
# <first argument>". It reads redis-cli's plain output (one line per element:
# id, time, µs, the arguments, the client's address, its name), which every
# redis-cli since 4.0 prints, rather than --json (7.0 and later) and jq.
slowlog() {
	rcli SLOWLOG GET 100000 | awk '
		state == 0 { state = 1; next }                     # id
		state == 1 { state = 2; next }                     # time
		state == 2 { us = $0; na = 0; cmd = "-"; arg = ""; state = 3; next }
		state == 3 && na > 0 && /^(\[[0-9a-fA-F:.]*\]|[0-9.]+):[0-9]+$/ { state = 4; next } # the address
		state == 3 { na++; if (na == 1) cmd = tolower($0); else if (na == 2) arg = $0; next }
		state == 4 { print us, ($0 == "" ? "-" : $0), cmd, arg; state = 0 }'
}
rss() { awk -v f="$2" '$1 == f":" { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; } # MB
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "nan"; else printf "%.2f", a / b }'; }
# quantile FILE P: the p50/p90/p99 (ms) of a loadgen report.
quantile() { awk -v p="$2" '$1 == "quantiles" { for (i = 2; i < NF; i += 2) if ($i == p) print $(i + 1) }' "$1"; }
# non200 FILE: answers other than 200 plus transport errors in a loadgen report.
non200() {
	awk '($1 == "list" || $1 == "update") && NF > 2 { for (i = 3; i < NF; i += 2) if ($i != "200:") n += $(i + 1) }
		$1 == "errors" { n += $2 } END { print n + 0 }' "$1"
}
rps() { awk '$1 == "requests" { for (i = 1; i <= NF; i++) if ($i == "req/s") print $(i - 1) }' "$1"; }
# non2xx FILE: like non200, but a 304 to a conditional list is an answer.
non2xx() {
	awk '($1 == "list" || $1 == "update") && NF > 2 { for (i = 3; i < NF; i += 2) if ($i != "200:" && $i != "304:") n += $(i + 1) }
		$1 == "errors" { n += $2 } END { print n + 0 }' "$1"
}
# notmod FILE: the 304s of a loadgen report; wiremean FILE: the mean list body bytes as received.
notmod() { awk '$1 == "conditional" { print $5 }' "$1"; }
wiremean() { awk '$1 == "list-bodies" { print $6 }' "$1"; }
# par8 PID [HEADER…]: 8 lists in parallel with the headers, sampling PID's
# VmRSS every 20 ms while any is in flight; sets peak (MB) and counts
# non-200 lists in bad_lists; logs each to lists.$n.txt.
par8() {
	local pid=$1 cpids=() alive c i code t
	shift
	for i in $(seq 8); do
		get "$base/inventory" /dev/null "$@" >"$dir/par.$n.$i.txt" &
		cpids+=($!)
	done
	peak=0
	while :; do
		peak=$(awk -v a="$peak" -v b="$(rss "$pid" VmRSS)" 'BEGIN { print (b > a ? b : a) }')
		alive=0
		for c in "${cpids[@]}"; do kill -0 "$c" 2>/dev/null && alive=1; done
		[ $alive = 1 ] || break
		sleep 0.02
	done
	wait "${cpids[@]}" || true
	for i in $(seq 8); do
		read -r code t <"$dir/par.$n.$i.txt"
		echo "parallel list $i after an update (${*:-identity}): $code ${t}s" >>"$dir/lists.$n.txt"
		[ "$code" = 200 ] || bad_lists=$((bad_lists + 1))
		rm "$dir/par.$n.$i.txt"
	done
}

tsv="$dir/million.tsv"
printf 'pets\tbytes\tready_s\tlist_ms\tafter_update_ms\tslowest_ms\tslowest_cmd\trss1_mb\trss8_mb\thwm_mb\tupd_alone_p50_ms\tupd_alone_p90_ms\tupd_alone_p99_ms\tys_alone_p50_ms\tys_alone_p90_ms\tys_alone_p99_ms\tupd_lists_p50_ms\tupd_lists_p90_ms\tupd_lists_p99_ms\tys_lists_p50_ms\tys_lists_p90_ms\tys_lists_p99_ms\tlist_rps\tbare_rps\tnon200_lists\tnon200_updates\tgz_bytes\tgz_coding\tetag\tcond_status\trss1gz_mb\trss8gz_mb\tgz_rps\tys_gz_rps\tbare_gz_rps\tgz_wire_mean\tcond_rps\tys_cond_rps\tcond_304s\n' >"$tsv"
status=0
for n in $sizes; do
	seed="$dir/seed.$n.json"
	"$bin/genseed" -pets "$n" -o "$seed"
	pport=$(free_port 20100)
	yport=$(free_port $((pport + 1)))
	bport=$(free_port $((yport + 1)))
	zport=$(free_port $((bport + 1)))
	prefix="million-$n-$RANDOM"
	bad_lists=0 bad_updates=0
	# 1. seed and wait until ready
	rcli SLOWLOG RESET >/dev/null
	start=$EPOCHREALTIME
	"$bin/redis" -addr "127.0.0.1:$pport" -framework gin -seed "$seed" -redis-prefix "$prefix" 2>"$dir/project.$n.log" &
	ppid=$!
	pids+=("$ppid")
	if ! wait_for "http://127.0.0.1:$pport/readyz" "$ppid" "$dir/project.$n.log" "$ready_timeout"; then
		echo "pets=$n: examples/redis did not become ready"
		status=1
		stop_servers
		continue
	fi
	ready=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	base="http://127.0.0.1:$pport/v1"
	body="$dir/body.$n.json"

	# 2. unchanged lists, one at a time; RSS after them
	: >"$dir/lists.$n.txt"
	times=""
	for i in $(seq "$nlists"); do
		read -r code t < <(get "$base/inventory" "$body.tmp")
		echo "list $i: $code ${t}s" >>"$dir/lists.$n.txt"
		if [ "$code" = 200 ]; then
			mv "$body.tmp" "$body"
			times+=" $t"
		else
			bad_lists=$((bad_lists + 1))
		fi
	done
	list_ms=$(echo "$times" | median | awk '{ print ($1 == "nan" ? "nan" : $1 * 1000) }')
	# the same state, accepting gzip: the body as received, decoded when
	# gzip and compared with the identity list; then revalidated
	gzbody="$dir/body.$n.gz"
	gz_bytes=nan gz_coding=none etag=no cond_status=none
	read -r code t < <(get "$base/inventory" "$gzbody" 'Accept-Encoding: gzip')
	echo "list accepting gzip: $code ${t}s" >>"$dir/lists.$n.txt"
	[ "$code" = 200 ] || bad_lists=$((bad_lists + 1))
	if [ "$code" = 200 ] && [ -s "$body" ]; then
		gz_bytes=$(wc -c <"$gzbody")
		if [ "$(header "$gzbody" Content-Encoding)" = gzip ]; then
			gz_coding=gzip
			if ! gzip -dc <"$gzbody" | cmp -s - "$body"; then
				echo "pets=$n: the gzip list does not decode to the identity list of the same state" | tee -a "$dir/lists.$n.txt"
				status=1
				gz_coding=broken
			fi
		else
			gz_coding=identity
			echo "# pets=$n: a list accepting gzip was answered identity" >>"$dir/lists.$n.txt"
		fi
		tag=$(header "$gzbody" ETag)
		if [ -n "$tag" ]; then
			etag=yes
			read -r cond_status t < <(get "$base/inventory" /dev/null 'Accept-Encoding: gzip' "If-None-Match: $tag")
			echo "list accepting gzip with If-None-Match $tag on the same state: $cond_status ${t}s" >>"$dir/lists.$n.txt"
		else
			echo "# pets=$n: the list has no ETag; no conditional list was sent" >>"$dir/lists.$n.txt"
		fi
	fi
	# 3. one update, then one list: the first list after a change; RSS after it
	update 1 7
	read -r code t < <(get "$base/inventory" /dev/null)
	echo "list after an update: $code ${t}s" >>"$dir/lists.$n.txt"
	[ "$code" = 200 ] || bad_lists=$((bad_lists + 1))
	after_ms=$(awk -v t="$t" -v c="$code" 'BEGIN { print (c == 200 ? t * 1000 : "nan") }')
	rss1=$(rss "$ppid" VmRSS)
	# 4. one update, then 8 lists in parallel, all of a version none has
	# encoded yet: the largest VmRSS sample while any is in flight
	update 1 8
	par8 "$ppid"
	rss8=$peak
	# 4b. the same with lists accepting gzip
	update 1 9
	read -r code t < <(get "$base/inventory" /dev/null 'Accept-Encoding: gzip')
	echo "list accepting gzip after an update: $code ${t}s" >>"$dir/lists.$n.txt"
	[ "$code" = 200 ] || bad_lists=$((bad_lists + 1))
	rss1gz=$(rss "$ppid" VmRSS)
	update 1 10
	par8 "$ppid" 'Accept-Encoding: gzip'
	rss8gz=$peak
	hwm=$(rss "$ppid" VmHWM)
	echo "VmRSS after one list after an update ${rss1} MB; largest VmRSS sample during 8 in parallel after an update ${rss8} MB; the same accepting gzip ${rss1gz} MB and ${rss8gz} MB; VmHWM since start ${hwm} MB" >>"$dir/lists.$n.txt"

	# The baselines need the bytes of a list; when no list was answered,
	# the seed without its line breaks stands in (the API answers the items
	# in the seed's order, in the same encoding; checked where both exist).
	if [ ! -s "$body" ]; then
		echo "# pets=$n: no list was answered 200; the baselines serve the seed file's bytes" | tee -a "$dir/lists.$n.txt"
		tr -d '\n' <"$seed" >"$body"
	elif ! cmp -s "$body" <(tr -d '\n' <"$seed"); then
		echo "# pets=$n: the list's bytes differ from the seed's (the baselines serve the list's)" >>"$dir/lists.$n.txt"
	fi
	bytes=$(wc -c <"$body")
	got=$(grep -o '"petId"' "$body" | wc -l)
	if [ "$got" != "$n" ]; then
		echo "pets=$n: the list holds $got pets, not $n" | tee -a "$dir/lists.$n.txt"
		status=1
	fi

	# The yardstick answers the project's gzip bytes when the project sent
	# gzip (of the identity list it serves), else its own compression.
	gzflag=()
	[ "$gz_coding" = gzip ] && gzflag=(-gzip-body "$gzbody")
	"$bin/yardstick" -addr "127.0.0.1:$yport" -body "$body" "${gzflag[@]}" -redis-prefix "yardstick-$prefix" 2>"$dir/yardstick.$n.log" &
	pids+=($!)
	wait_for "http://127.0.0.1:$yport/v1/inventory" $! "$dir/yardstick.$n.log" "$ready_timeout" || exit 1
	"$bin/bareserver" -addr "127.0.0.1:$bport" -body "$body" 2>"$dir/bare.$n.log" &
	pids+=($!)
	wait_for "http://127.0.0.1:$bport/v1/inventory" $! "$dir/bare.$n.log" 60 || exit 1
	"$bin/bareserver" -addr "127.0.0.1:$zport" -body "$body" -gzip 2>"$dir/bare-gzip.$n.log" &
	pids+=($!)
	wait_for "http://127.0.0.1:$zport/v1/inventory" $! "$dir/bare-gzip.$n.log" 60 || exit 1
	for p in "$yport" "$zport"; do
		get "http://127.0.0.1:$p/v1/inventory" "$dir/check.$n.gz" 'Accept-Encoding: gzip' >/dev/null
		gzip -dc <"$dir/check.$n.gz" | cmp -s - "$body" || { echo "the server on port $p does not answer gzip of the list's bytes" >&2; exit 1; }
	done
	rm -f "$dir/check.$n.gz" "$dir/check.$n.gz.h"
	for p in "$yport" "$bport" "$zport"; do
		get "http://127.0.0.1:$p/v1/inventory" "$dir/check.$n.json" >/dev/null
		cmp -s "$dir/check.$n.json" "$body" || { echo "the server on port $p does not answer the list's bytes" >&2; exit 1; }
	done
	rm -f "$dir/check.$n.json" "$dir/check.$n.json.h" "$body.tmp" "$body.tmp.h"

	# 5. update latency, alone and under lists, project and yardstick interleaved
	step=$(((n + 999) / 1000))
	pets=$(seq -s, 1 "$step" "$n")
	declare -A q=()
	for r in $(seq "$rounds"); do
		for mode in alone lists; do
			for s in project yardstick; do
				port=$pport
				[ $s = yardstick ] && port=$yport
				f="$dir/update.$s.$mode.$n.r$r.txt"
				wait_quiet >"$f"
				lpid=
				if [ $mode = lists ]; then
					"$bin/loadgen" -base-url "http://127.0.0.1:$port/v1" -mix list=1,update=0 -rate 4 -connections 4 \
						-duration "$phase" -timeout "$list_timeout" >"$dir/lists.$s.$n.r$r.txt" 2>&1 &
					lpid=$!
				fi
				"$bin/loadgen" -base-url "http://127.0.0.1:$port/v1" -mix list=0,update=1 -rate "$rate" \
					-connections "$uconns" -duration "$phase" -pets "$pets" >>"$f" 2>&1 || true
				bad_updates=$((bad_updates + $(non200 "$f")))
				if [ -n "$lpid" ]; then
					wait "$lpid" || true
					bad_lists=$((bad_lists + $(non200 "$dir/lists.$s.$n.r$r.txt")))
				fi
				for p in p50 p90 p99; do q[$s.$mode.$p]+=" $(quantile "$f" $p)"; done
			done
		done
	done
	for k in "${!q[@]}"; do q[$k]=$(echo "${q[$k]}" | median); done

	# 6. req/s of an unchanged list, project then bare
	get "$base/inventory" /dev/null >/dev/null # bring the project's list up to date
	declare -A lrps=()
	for r in $(seq "$rounds"); do
		for s in project bare; do
			port=$pport
			[ $s = bare ] && port=$bport
			f="$dir/rps.$s.$n.r$r.txt"
			wait_quiet >"$f"
			"$bin/loadgen" -base-url "http://127.0.0.1:$port/v1" -mix list=1,update=0 -connections "$conns" \
				-duration "$rps_phase" -timeout "$list_timeout" >>"$f" 2>&1 || true
			[ $s = project ] && bad_lists=$((bad_lists + $(non200 "$f")))
			lrps[$s]+=" $(rps "$f")"
		done
	done
	# 6b. lists accepting gzip, then conditional lists
	for r in $(seq "$rounds"); do
		for run in project.gz yardstick.gz bare.gz project.cond yardstick.cond; do
			s=${run%.*}
			mode=${run#*.}
			case $s in project) port=$pport ;; yardstick) port=$yport ;; bare) port=$zport ;; esac
			flags=(-gzip)
			[ "$mode" = cond ] && flags+=(-conditional)
			f="$dir/rps.$run.$n.r$r.txt"
			wait_quiet >"$f"
			"$bin/loadgen" -base-url "http://127.0.0.1:$port/v1" -mix list=1,update=0 -connections "$conns" "${flags[@]}" \
				-duration "$rps_phase" -timeout "$list_timeout" >>"$f" 2>&1 || true
			[ $s = project ] && bad_lists=$((bad_lists + $(non2xx "$f")))
			lrps[$run]+=" $(rps "$f")"
			[ "$run" = project.gz ] && lrps[gzmean]+=" $(wiremean "$f")"
			[ "$run" = project.cond ] && lrps[cond304]+=" $(notmod "$f")"
		done
	done
	for k in "${!lrps[@]}"; do lrps[$k]=$(echo "${lrps[$k]}" | median); done

	# 7. the longest Redis command of the run that was not the yardstick's
	slowlog >"$dir/slowlog.$n.txt"
	sort -rn "$dir/slowlog.$n.txt" | head -20 >"$dir/slowlog.$n.top.txt"
	read -r slow_us slow_cmd < <(awk '$2 != "yardstick" { print $1, $3 }' "$dir/slowlog.$n.txt" | sort -rn | head -1 | grep . || echo "0 -")
	slow_ms=$(awk -v u="$slow_us" 'BEGIN { printf "%.1f", u / 1000 }')
	stop_servers

	[ $bad_lists = 0 ] && [ $bad_updates = 0 ] || status=1
	printf '%s\n' "$n" "$bytes" "$ready" "$list_ms" "$after_ms" "$slow_ms" "$slow_cmd" "$rss1" "$rss8" "$hwm" \
		"${q[project.alone.p50]}" "${q[project.alone.p90]}" "${q[project.alone.p99]}" \
		"${q[yardstick.alone.p50]}" "${q[yardstick.alone.p90]}" "${q[yardstick.alone.p99]}" \
		"${q[project.lists.p50]}" "${q[project.lists.p90]}" "${q[project.lists.p99]}" \
		"${q[yardstick.lists.p50]}" "${q[yardstick.lists.p90]}" "${q[yardstick.lists.p99]}" \
		"${lrps[project]}" "${lrps[bare]}" "$bad_lists" "$bad_updates" \
		"$gz_bytes" "$gz_coding" "$etag" "$cond_status" "$rss1gz" "$rss8gz" \
		"${lrps[project.gz]}" "${lrps[yardstick.gz]}" "${lrps[bare.gz]}" "${lrps[gzmean]}" \
		"${lrps[project.cond]}" "${lrps[yardstick.cond]}" "${lrps[cond304]}" | paste -sd '\t' >>"$tsv"
	echo "pets=$n bytes=$bytes ready=${ready}s list=${list_ms}ms after-update=${after_ms}ms" \
		"slowest=${slow_ms}ms($slow_cmd)" \
		"rss1=${rss1}MB rss8=${rss8}MB($(ratio "$rss8" "$rss1")x) hwm=${hwm}MB" \
		"upd-alone-p90/p99 project=${q[project.alone.p90]}/${q[project.alone.p99]}ms yardstick=${q[yardstick.alone.p90]}/${q[yardstick.alone.p99]}ms" \
		"upd-lists-p90/p99 project=${q[project.lists.p90]}/${q[project.lists.p99]}ms yardstick=${q[yardstick.lists.p90]}/${q[yardstick.lists.p99]}ms" \
		"(ratio p90 $(ratio "${q[project.lists.p90]}" "${q[yardstick.lists.p90]}")x p99 $(ratio "${q[project.lists.p99]}" "${q[yardstick.lists.p99]}")x)" \
		"list-rps project=${lrps[project]} bare=${lrps[bare]}($(ratio "${lrps[project]}" "${lrps[bare]}")x)" \
		"gzip=${gz_bytes}B($gz_coding; identity/gzip $(ratio "$bytes" "$gz_bytes")x) etag=$etag conditional=$cond_status" \
		"rss-gzip1=${rss1gz}MB rss-gzip8=${rss8gz}MB($(ratio "$rss8gz" "$rss1gz")x)" \
		"gzip-rps project=${lrps[project.gz]} yardstick=${lrps[yardstick.gz]}($(ratio "${lrps[project.gz]}" "${lrps[yardstick.gz]}")x)" \
		"bare-gzip=${lrps[bare.gz]}($(ratio "${lrps[project.gz]}" "${lrps[bare.gz]}")x) wire-mean=${lrps[gzmean]}B" \
		"cond-rps project=${lrps[project.cond]}(304s ${lrps[cond304]}) yardstick=${lrps[yardstick.cond]}($(ratio "${lrps[project.cond]}" "${lrps[yardstick.cond]}")x)" \
		"non200 lists=$bad_lists updates=$bad_updates"
	unset q lrps
done
exit $status
