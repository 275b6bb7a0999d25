#!/bin/bash
# Runs fuzz targets one at a time, niced, from a queue file of lines `target runs seconds`
# (libFuzzer stops at whichever limit comes first). Lines may be appended or rewritten while it
# runs. New inputs go to $WORK/<target> (the committed seeds in corpus/<target> are only read);
# each run's log goes to $WORK/logs and one line per run to $WORK/summary. No run goes past
# $DEADLINE (a `date -d` time, e.g. 12:28). Build first: cargo fuzz build -s none (binaries are
# looked up under $CARGO_TARGET_DIR when it is set, as cargo put them there)
#
#   fuzz/scripts/run_queue.sh queue.txt /tmp/fuzzwork 12:28
set -u
QUEUE=$1 WORK=$2 DEADLINE=$(date -u -d "${3:-tomorrow}" +%s)
FUZZ=$(cd "$(dirname "$0")/.." && pwd)
BIN=${CARGO_TARGET_DIR:-$FUZZ/target}/x86_64-unknown-linux-gnu/release
mkdir -p "$WORK/logs"
cd "$FUZZ"
while true; do
  now=$(date -u +%s)
  [ "$now" -ge "$DEADLINE" ] && break
  line=$(head -n1 "$QUEUE" 2>/dev/null)
  [ -z "$line" ] && break
  sed -i '1d' "$QUEUE"
  read -r t runs secs <<<"$line"
  left=$((DEADLINE - now)); [ "$secs" -gt "$left" ] && secs=$left
  dict=dict/jsonrpc.dict; [ -f "dict/$t.dict" ] && dict=dict/$t.dict
  mkdir -p "$WORK/$t" "artifacts/$t"
  log=$WORK/logs/$t.$(date -u +%H%M%S).log
  start=$(date -u +%s)
  nice -n 19 "$BIN/$t" -artifact_prefix="artifacts/$t/" -runs="$runs" -max_total_time="$secs" \
    -timeout=10 -rss_limit_mb=2048 -dict="$dict" -print_final_stats=1 "$WORK/$t" "corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(awk '/number_of_executed_units/ {print $2}' "$log")
  rate=$(awk '/average_exec_per_sec/ {print $2}' "$log")
  echo "$t rc=$rc seconds=$(($(date -u +%s) - start)) execs=$execs exec/s=$rate corpus=$(ls "$WORK/$t" | wc -l)" >>"$WORK/summary"
done
