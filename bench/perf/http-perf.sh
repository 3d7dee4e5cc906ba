#!/usr/bin/env bash
# Profile the profiler: `perf record` the overhead bench's server, control then
# spanfuse at defaults (one round, one runtime), and print where each one's CPU
# went by category (bench/perf/categories.py), per request.
#
#   bench/perf/http-perf.sh TAG [node24|node20] [PERF_DELAY_S] [WARMUP_S]
#
# PERF_CONFIGS=A,B picks the two configurations (default control,spanfuse-default;
# e.g. untraced,pprof-100hz for @datadog/pprof's sampler alone). The bench
# always runs `control` first, then the others in the order given; every server
# process is recorded, in that order.
#
# PERF_DELAY_S (default 9) is when recording starts after the server process
# appears; it records 20 s, so keep PERF_DELAY_S + 20 inside warm-up + 30 s.
# Run from the repository root after `npx tsc -p tsconfig.json`; needs perf.
set -euo pipefail
tag=$1; nodes=${2:-node24}; delay=${3:-9}; warm=${4:-5}
configs=${PERF_CONFIGS:-control,spanfuse-default}
order=control
for c in ${configs//,/ }; do [ "$c" = control ] || order="$order $c"; done
dir=$(mktemp -d /tmp/http-perf-$tag.XXXX)
node dist/bench/overhead/run.js --rounds 1 --warmup "$warm" --duration 30 --window-ms 10000 \
  --configs "$configs" --nodes "$nodes" --server-flag=--perf-basic-prof > "$dir/bench.log" 2>&1 &
bench=$!
for cfg in $order; do
  pid=
  while [ -z "$pid" ]; do pid=$(pgrep -f "overhead/server.js" | head -1 || true); sleep 0.3; done
  sleep "$delay"
  perf record -q -e cpu-clock -F 999 -g -p "$pid" -o "$dir/$cfg.data" -- sleep 20 2>/dev/null
  while kill -0 "$pid" 2>/dev/null; do sleep 0.3; done
done
wait $bench
json=$(grep -o '/[^ ]*overhead-custom-[^ ]*\.json' "$dir/bench.log" | tail -1)
for cfg in $order; do
  rps=$(node -e "const d=require('$json');const r=d.results.find(x=>x.config==='$cfg');console.log(Math.round(r.server.requests/r.server.wallMs*20000))")
  echo "== $cfg (~$rps requests in the 20 s recorded)"
  python3 bench/perf/categories.py "$dir/$cfg.data" "$rps" 3
done
echo "perf data and bench log in $dir"
