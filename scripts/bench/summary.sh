#!/usr/bin/env bash
# summary.sh OUT prints, as Markdown, the tables of BENCHMARKS.md from the
# raw output that inprocess.sh, redis.sh and load.sh wrote under OUT (any
# of the three may be missing).
#
# Every figure is a median over the rounds. Ratios are computed within
# each round (lib and its baseline from the same run) and the median of
# those per-round ratios is shown, with the lowest and highest in
# brackets. POSIX awk only (mawk or gawk).
#
#   scripts/bench/summary.sh /tmp/bench > /tmp/bench/tables.md
set -euo pipefail
out=${1:?usage: summary.sh OUT}

# Functions shared by the three awk programs.
lib='
function med(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	if (n == 0) return ""
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lo(list,    n, a, i, m) { n = split(list, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 < m) m = a[i] + 0; return m }
function hi(list,    n, a, i, m) { n = split(list, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 > m) m = a[i] + 0; return m }
function cnt(list,    a) { return split(list, a, " ") }
function ns(x) { return x >= 100000 ? sprintf("%.0f", x) : x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
function ratio(list) { return list == "" ? "–" : sprintf("%.2f (%.2f–%.2f)", med(list), lo(list), hi(list)) }
# round(file) is the round number of a file named …r<N>.txt.
function round(f,    r) { r = f; sub(/\.txt$/, "", r); sub(/.*\.r/, "", r); return r + 0 }
'

if ls "$out"/inprocess/*.r*.txt >/dev/null 2>&1; then
	echo "### In-process benchmarks (memstore), medians of $(ls "$out"/inprocess/gin.r*.txt | wc -l) interleaved rounds"
	echo
	awk "$lib"'
	/^Benchmark/ {
		m = FILENAME; sub(/.*\//, "", m); sub(/\..*/, "", m)
		name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
		n = split(name, p, "/")
		side = p[2]; bench = p[1] (n > 2 ? "/" p[3] : "")
		delete v
		for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
		r = round(FILENAME)
		k = m SUBSEP bench SUBSEP side
		t[k] = t[k] " " v["ns/op"]; bb[k] = bb[k] " " v["B/op"]; al[k] = al[k] " " v["allocs/op"]
		one[k, r] = v["ns/op"]; rounds[r] = 1
		if (!(m SUBSEP bench in seen)) { seen[m, bench] = 1; order[++nb] = m SUBSEP bench }
	}
	END {
		print "| framework | benchmark | lib ns/op | bare ns/op | bare+sha256 ns/op | bare ÷ lib | (bare+sha256) ÷ lib | lib B/op | bare B/op | lib allocs/op | bare allocs/op | Δ allocs |"
		print "|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|"
		for (i = 1; i <= nb; i++) {
			split(order[i], q, SUBSEP); m = q[1]; bench = q[2]
			L = m SUBSEP bench SUBSEP "lib"; B = m SUBSEP bench SUBSEP "bare"; S = m SUBSEP bench SUBSEP "bare+sha256"
			rb = ""; rs = ""
			for (r in rounds) {
				if ((L, r) in one && (B, r) in one) rb = rb " " one[B, r] / one[L, r]
				if ((L, r) in one && (S, r) in one) rs = rs " " one[S, r] / one[L, r]
			}
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %+d |\n", m, bench, ns(med(t[L])), ns(med(t[B])), (S in t ? ns(med(t[S])) : "–"), ratio(rb), ratio(rs), med(bb[L]), med(bb[B]), med(al[L]), med(al[B]), med(al[L]) - med(al[B])
		}
		print ""
		print "List cost, 10 000 items ÷ 100 items (lib ns/op, per round):"
		print ""
		for (i = 1; i <= nb; i++) {
			split(order[i], q, SUBSEP); m = q[1]
			if (q[2] != "List/items=100") continue
			A = m SUBSEP "List/items=10000" SUBSEP "lib"; C = m SUBSEP "List/items=100" SUBSEP "lib"
			x = ""; for (r in rounds) if ((A, r) in one && (C, r) in one) x = x " " one[A, r] / one[C, r]
			printf "- %s: %s×\n", m, ratio(x)
		}
	}' "$out"/inprocess/*.r*.txt
	echo
fi

if ls "$out"/redis/redis.r*.txt >/dev/null 2>&1; then
	echo "### Redis benchmarks (redis-server), medians of $(ls "$out"/redis/redis.r*.txt | wc -l) rounds"
	echo
	awk "$lib"'
	/^Benchmark/ {
		name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
		split(name, p, "/") # Update/backend/pets/side or List/backend/items=N/side
		kind = p[1]; group = p[3]; side = p[4]
		delete v
		for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
		r = round(FILENAME); rounds[r] = 1
		k = kind SUBSEP group SUBSEP side
		if (!(k in t)) order[++no] = k
		t[k] = t[k] " " v["ns/op"]; one[k, r] = v["ns/op"]
		for (u in v) if (u != "ns/op") { met[k, u] = met[k, u] " " v[u]; units[u] = 1 }
		if ("exhausted" in v) exh[k] += v["exhausted"]
	}
	function row(k,    q) {
		split(k, q, SUBSEP)
		if (q[1] ~ /^Update/)
			printf "| %s | %s | %s | %.0f | %s | %s | %s | %s | %.3f | %d |\n", q[2], q[3], ns(med(t[k])), 1e9 / med(t[k]), med(met[k, "rtts/op"]), med(met[k, "cmds/op"]), med(met[k, "B/op"]), med(met[k, "allocs/op"]), med(met[k, "aborts/op"]), exh[k]
		else
			printf "| %s | %s | %s | %s | %s | %s | %s |\n", q[2], q[3], ns(med(t[k])), med(met[k, "rtts/op"]), med(met[k, "cmds/op"]), med(met[k, "B/op"]), med(met[k, "allocs/op"])
	}
	function per_round(a, b,    r, x) { x = ""; for (r in rounds) if ((a, r) in one && (b, r) in one) x = x " " one[a, r] / one[b, r]; return x }
	END {
		print "Update, 32 concurrent callers (ops/s = 10⁹ ÷ ns/op; exhausted = sum over all rounds):"
		print ""
		print "| pets | side | ns/op | ops/s | rtts/op | cmds/op | B/op | allocs/op | aborts/op | exhausted |"
		print "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= no; i++) if (order[i] ~ /^Update/) row(order[i])
		print ""
		printf "Replica acks (store-noacks and store-acks1 run on a master with one replica of their own): store-noacks ns ÷ store-acks1 ns per round %s\n", ratio(per_round("UpdateReplicaAcks" SUBSEP "distinct" SUBSEP "store-noacks", "UpdateReplicaAcks" SUBSEP "distinct" SUBSEP "store-acks1"))
		print ""
		print "| ratio (per round, median (min–max)) | distinct | hot |"
		print "|---|---|---|"
		split("api store", sides, " ")
		for (j = 1; j <= 2; j++) {
			s = sides[j]
			printf "| raw ÷ %s (library keeps this fraction of the raw loop) | %s | %s |\n", s, ratio(per_round("Update" SUBSEP "distinct" SUBSEP "raw", "Update" SUBSEP "distinct" SUBSEP s)), ratio(per_round("Update" SUBSEP "hot" SUBSEP "raw", "Update" SUBSEP "hot" SUBSEP s))
		}
		print ""
		print "| hot vs distinct (distinct ns ÷ hot ns) | api | store | raw |"
		print "|---|---|---|---|"
		printf "| median (min–max) | %s | %s | %s |\n", ratio(per_round("Update" SUBSEP "distinct" SUBSEP "api", "Update" SUBSEP "hot" SUBSEP "api")), ratio(per_round("Update" SUBSEP "distinct" SUBSEP "store", "Update" SUBSEP "hot" SUBSEP "store")), ratio(per_round("Update" SUBSEP "distinct" SUBSEP "raw", "Update" SUBSEP "hot" SUBSEP "raw"))
		print ""
		print "List, one caller (unchanged: the store is a VersionedLister, so the API answers from its cached encoding after one GET of the version key; changed: one pet is updated before each list, outside the timer and the rtts count, not the cmds count):"
		print ""
		print "| items | side | ns/op | rtts/op | cmds/op | B/op | allocs/op |"
		print "|---|---|---:|---:|---:|---:|---:|"
		for (i = 1; i <= no; i++) if (order[i] ~ /^List/) row(order[i])
		print ""
		for (i = 1; i <= no; i++) if (order[i] ~ /^List/ && order[i] ~ /api-unchanged$/) {
			split(order[i], q, SUBSEP)
			printf "- %s: api-changed ÷ api-unchanged (ns) %s×; raw ÷ api-changed %s\n", q[2], ratio(per_round("List" SUBSEP q[2] SUBSEP "api-changed", order[i])), ratio(per_round("List" SUBSEP q[2] SUBSEP "raw", "List" SUBSEP q[2] SUBSEP "api-changed"))
		}
		split("api-unchanged api-changed", lsides, " ")
		for (j = 1; j <= 2; j++) {
			s = lsides[j]
			printf "- %s list, 10 000 items ÷ 10 items: %s×\n", s, ratio(per_round("List" SUBSEP "items=10000" SUBSEP s, "List" SUBSEP "items=10" SUBSEP s))
		}
	}' "$out"/redis/redis.r*.txt
	echo
fi

if ls "$out"/load/*.r*.txt >/dev/null 2>&1; then
	echo "### Load tests (loadgen), medians of $(ls "$out"/load/*.c*.r*.txt | sed 's/.*\.r//' | sort -u | wc -l) interleaved rounds"
	echo
	awk "$lib"'
	# us converts a Go duration ("240.574µs", "2.27ms", "1.5s", "900ns") to µs.
	function us(d,    x) {
		x = d
		if (x ~ /ms$/) { sub(/ms$/, "", x); return x * 1000 }
		if (x ~ /ns$/) { sub(/ns$/, "", x); return x / 1000 }
		if (x ~ /s$/ && x !~ /[^0-9.]s$/) { sub(/s$/, "", x); return x * 1e6 }
		sub(/[^0-9.]+s$/, "", x); return x + 0 # µs
	}
	function dur(x) { return x >= 1000 ? sprintf("%.2f ms", x / 1000) : sprintf("%.0f µs", x) }
	FNR == 1 {
		f = FILENAME; sub(/.*\//, "", f); sub(/\.r[0-9]+\.txt$/, "", f)
		s = f; sub(/\.c[0-9]+$/, "", s); c = f; sub(/.*\.c/, "", c)
		k = s SUBSEP c
		if (!(k in seen)) { seen[k] = 1; order[++no] = k }
	}
	/^requests/ { x = $NF == "req/s" ? $(NF - 1) : ""; rps[k] = rps[k] " " x; failed[k] += $4 }
	/^latency/ { p50[k] = p50[k] " " us($3); p99[k] = p99[k] " " us($5); p999[k] = p999[k] " " us($7); mx[k] = mx[k] " " us($9) }
	/^errors/ { errs[k] += $2 }
	/^unexpected/ { unexp[k] += 1 }
	END {
		print "| server | connections | req/s median (min–max) | p50 | p99 | p99.9 | max (median) | transport errors | unexpected statuses |"
		print "|---|---:|---|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= no; i++) {
			split(order[i], q, SUBSEP); k = order[i]
			printf "| %s | %s | %.0f (%.0f–%.0f) | %s | %s | %s | %s | %d | %d |\n", q[1], q[2], med(rps[k]), lo(rps[k]), hi(rps[k]), dur(med(p50[k])), dur(med(p99[k])), dur(med(p999[k])), dur(med(mx[k])), errs[k], unexp[k]
		}
	}' $(ls "$out"/load/*.c*.r*.txt | sort -V)
	echo
fi
