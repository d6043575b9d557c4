#!/usr/bin/env bash
# Load test of the filter service against the Mutex<cuckoofilter::CuckooFilter> baseline: both
# servers on loopback, wrk alternating between them for each mix and round; prints requests/s and
# p50/p99 latency per run, their medians, and the answers that were not 2xx (all runs). Needs wrk
# (Debian: apt-get install -y wrk).
#
# Settings (environment): DURATION (10s), CONNECTIONS (64), THREADS (1, wrk's), ROUNDS (3),
# PREFILL (1000000 keys), CAPACITY (4000000), MIXES (read-heavy write-heavy batch-lookup: the
# Lua scripts beside this one).
set -euo pipefail
script_dir="$(cd "$(dirname "$0")" && pwd)"
cd "$script_dir/../.."
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-3}
export PREFILL=${PREFILL:-1000000}
CAPACITY=${CAPACITY:-4000000}
MIXES=${MIXES:-read-heavy write-heavy batch-lookup}
command -v wrk >/dev/null || { echo "run.sh needs wrk: apt-get install -y wrk" >&2; exit 1; }

cargo build --release -p ccf-use-cases --bin filter-server
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT

# Starts a server (extra flags in $2) and waits for the address it prints; sets url_$1. A server
# that stops first (its message on stderr) stops the script.
start() {
  : >"$work/$1.out"
  target/release/filter-server --capacity "$CAPACITY" --prefill "$PREFILL" $2 >"$work/$1.out" &
  local pid=$!
  pids+=("$pid")
  until grep -q '^listening on ' "$work/$1.out"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" || true
      echo "run.sh: the $1 server stopped before it listened" >&2
      exit 1
    fi
    sleep 0.2
  done
  printf -v "url_$1" '%s' "$(sed -n 's/^listening on //p' "$work/$1.out")"
}
start ours ""
start baseline "--baseline"
echo "servers: ours at $url_ours, baseline at $url_baseline; wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ROUNDS rounds"

# wrk's latency in µs from a value such as 812.00us, 1.23ms or 1.01s.
to_us() {
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) { sub(/us$/, "", v); print v + 0 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v); print v * 1000 }
    else { sub(/s$/, "", v); print v * 1000000 } }'
}

results="$work/results"
for round in $(seq "$ROUNDS"); do
  for mix in $MIXES; do
    for server in ours baseline; do
      url_var="url_$server"
      RUN="$round-$mix-$server" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$script_dir/$mix.lua" "${!url_var}" >"$work/wrk.out"
      rps=$(awk '/^Requests\/sec:/ { print $2 }' "$work/wrk.out")
      p50=$(to_us "$(awk '$1 == "50%" { print $2 }' "$work/wrk.out")")
      p99=$(to_us "$(awk '$1 == "99%" { print $2 }' "$work/wrk.out")")
      errors=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$work/wrk.out")
      echo "round $round $mix $server: $rps requests/s, p50 $p50 µs, p99 $p99 µs, non-2xx ${errors:-0}"
      echo "$mix $server $rps $p50 $p99 ${errors:-0}" >>"$results"
    done
  done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
printf '%-12s %-10s %12s %10s %10s %8s\n' mix server requests/s "p50 µs" "p99 µs" non-2xx
for mix in $MIXES; do
  for server in ours baseline; do
    pick() { awk -v m="$mix" -v s="$server" -v c="$1" '$1 == m && $2 == s { print $c }' "$results" | median; }
    errors=$(awk -v m="$mix" -v s="$server" '$1 == m && $2 == s { n += $6 } END { print n + 0 }' "$results")
    printf '%-12s %-10s %12.0f %10.0f %10.0f %8d\n' "$mix" "$server" "$(pick 3)" "$(pick 4)" "$(pick 5)" "$errors"
  done
done
