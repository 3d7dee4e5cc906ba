#!/usr/bin/env bash
# The kernel's own counters for the overhead bench's server, control then
# spanfuse at defaults (one round, one runtime), over 15 s of the measured
# window: user and system CPU and minor page faults of the process
# (/proc/PID/stat), and voluntary / involuntary context switches by thread
# name (/proc/PID/task/*/status), each per request. A check on what
# `perf record` attributes to kernel code (bench/perf/http-perf.sh): perf's
# samples say where a sample landed, these say how much system time and
# how many switches there were.
#
#   bench/perf/proc-counters.sh [node24|node20] [DELAY_S]
#
# DELAY_S (default 10) is when the first reading is taken after the server
# process appears (5 s of warm-up, then 25 s measured). Run from the
# repository root after `npx tsc -p tsconfig.json`.
set -euo pipefail
nodes=${1:-node24}; delay=${2:-10}; span=15
dir=$(mktemp -d /tmp/proc-counters.XXXX)
node dist/bench/overhead/run.js --rounds 1 --warmup 5 --duration 25 --window-ms 10000 \
  --configs control,spanfuse-default --nodes "$nodes" > "$dir/bench.log" 2>&1 &
bench=$!
# minflt utime stime (clock ticks) of the process.
stat_of() { awk '{print $10, $14, $15}' "/proc/$1/stat"; }
# "name voluntary involuntary" summed over the threads of each name.
switches_of() {
  for t in /proc/"$1"/task/*; do
    printf '%s %s %s\n' "$(tr ' ' '_' < "$t/comm")" \
      "$(awk '/^voluntary_ctxt_switches/{print $2}' "$t/status")" \
      "$(awk '/^nonvoluntary_ctxt_switches/{print $2}' "$t/status")"
  done 2>/dev/null | awk '{v[$1]+=$2; n[$1]+=$3} END {for (k in v) print k, v[k], n[k]}' | sort
}
for cfg in control spanfuse-default; do
  pid=
  while [ -z "$pid" ]; do pid=$(pgrep -f "overhead/server.js" | head -1 || true); sleep 0.2; done
  sleep "$delay"
  s0=$(stat_of "$pid"); switches_of "$pid" > "$dir/$cfg-a"
  sleep "$span"
  s1=$(stat_of "$pid"); switches_of "$pid" > "$dir/$cfg-b"
  echo "$cfg $s0 $s1" >> "$dir/stat"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.3; done
done
wait $bench
hz=$(getconf CLK_TCK)
for cfg in control spanfuse-default; do
  # The bench prints one result line per server, control first.
  rps=$(grep -E '^[0-9:]+ +[0-9]+ req/s' "$dir/bench.log" | sed -n "$([ $cfg = control ] && echo 1 || echo 2)p" | awk '{print $2}')
  req=$(( rps * span ))
  read -r _ f0 u0 s0 f1 u1 s1 < <(grep "^$cfg " "$dir/stat")
  echo "== $cfg (~$req requests in ${span} s, $rps req/s)"
  awk -v f=$((f1 - f0)) -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$hz" -v r="$req" \
    'BEGIN {printf "  user %.1f us/req, system %.1f us/req, minor faults %.2f per request\n", u*1e6/hz/r, s*1e6/hz/r, f/r}'
  join "$dir/$cfg-a" "$dir/$cfg-b" | awk -v r="$req" \
    '{printf "  %-18s voluntary %7d (%.3f/req)  involuntary %7d (%.3f/req)\n", $1, $4-$2, ($4-$2)/r, $5-$3, ($5-$3)/r}'
done
echo "bench log in $dir"
