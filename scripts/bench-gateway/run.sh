#!/usr/bin/env bash
# The gateway cells of scripts/bench.sh (issue 30): HTTP `tools/call` at C=1 and C=32 through
# the harness's load generator, against the floor's own HTTP server and against three gateways
# in front of the floor's stdio server: `mcp serve`, supergateway and FastMCP's proxy. Then the
# idle memory of `mcp serve` with that one upstream beside our bench server's. Run by
# scripts/bench.sh (`bash scripts/bench.sh gateway`), which builds what it needs and sets:
#
#   SCRATCH (the harness copy, built), MCP (the `mcp` binary), OURS (bench_server),
#   RUN_DIR (where results go), PEERS_DIR (where the peers are installed), PORT,
#   MAX_SECONDS, QUIET_TIMEOUT, GATEWAY_ROUNDS.
#
# The peers come from npm and PyPI at pinned versions (SUPERGATEWAY_VERSION,
# FASTMCP_VERSION); a peer that cannot be installed or started is skipped and the reason is
# kept in RUN_DIR/peers.txt for the report. Every load is bounded in count and time, and every
# server is stopped after its cell.
set -euo pipefail
: "${SCRATCH:?} ${MCP:?} ${OURS:?} ${RUN_DIR:?} ${PEERS_DIR:?}"
PORT=${PORT:-18931}
MAX_SECONDS=${MAX_SECONDS:-10}
QUIET_TIMEOUT=${QUIET_TIMEOUT:-30}
QUIET_MAX=${QUIET_MAX:-10}
GATEWAY_ROUNDS=${GATEWAY_ROUNDS:-2}
SUPERGATEWAY_VERSION=${SUPERGATEWAY_VERSION:-4.0.0}
FASTMCP_VERSION=${FASTMCP_VERSION:-4.2.3}
HERE=$(cd "$(dirname "$0")" && pwd)
LG=$SCRATCH/target/release/mcpbench
FLOOR=$SCRATCH/target/release/server-floor
URL=http://127.0.0.1:$PORT/mcp
JSONL=$RUN_DIR/results.jsonl
LOG=$RUN_DIR/servers.log
PEERS=$RUN_DIR/peers.txt
SG_DIR=$PEERS_DIR/node
VENV=$PEERS_DIR/venv
SERVER_PID=""

log() { echo "==> bench gateway: $*" >&2; }

# ---------------------------------------------------------------- peers
install_supergateway() {
    local installed
    installed=$(node -p "require('$SG_DIR/node_modules/supergateway/package.json').version" 2>/dev/null || true)
    [[ $installed == "$SUPERGATEWAY_VERSION" ]] && return 0
    log "installing supergateway@$SUPERGATEWAY_VERSION into $SG_DIR"
    mkdir -p "$SG_DIR"
    (cd "$SG_DIR" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
        timeout 300 npm install --no-audit --no-fund --save-exact \
            "supergateway@$SUPERGATEWAY_VERSION" >/dev/null)
}

install_fastmcp() {
    "$VENV/bin/python" -c "import importlib.metadata as m, sys; \
sys.exit(m.version('fastmcp') != '$FASTMCP_VERSION')" 2>/dev/null && return 0
    log "installing fastmcp==$FASTMCP_VERSION into $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV" &&
        timeout 600 "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
            --no-input "fastmcp==$FASTMCP_VERSION"
}

# Each peer is measured only if it installs; the reason it was not is kept for the report.
install_peers() {
    : >"$PEERS"
    if install_supergateway >>"$LOG" 2>&1; then
        echo "supergateway|ok|$SUPERGATEWAY_VERSION (npm), node $(node --version)" >>"$PEERS"
    else
        echo "supergateway|skipped|npm install supergateway@$SUPERGATEWAY_VERSION failed (see servers.log)" >>"$PEERS"
    fi
    if install_fastmcp >>"$LOG" 2>&1; then
        echo "fastmcp|ok|$FASTMCP_VERSION (PyPI), $("$VENV/bin/python" --version)" >>"$PEERS"
    else
        echo "fastmcp|skipped|pip install fastmcp==$FASTMCP_VERSION failed (see servers.log)" >>"$PEERS"
    fi
}

peer_ok() { grep -q "^$1|ok|" "$PEERS"; }

# ---------------------------------------------------------------- servers
# NAME) "HTTP command (listens on $PORT, serves /mcp)|N at C=1|N at C=32|warm-up calls".
# The N are sized for a few seconds each; MAX_SECONDS caps every run anyway. supergateway
# runs stateful (one child per session, as a client with sessions uses it); stateless, it
# starts a new child for every request.
server_def() {
    case "$1" in
        floor) echo "$FLOOR --transport http --port $PORT|100000|300000|1000" ;;
        mcp-serve) echo "$MCP serve --http 127.0.0.1:$PORT --stdio -- $FLOOR|100000|300000|1000" ;;
        supergateway) echo "node $SG_DIR/node_modules/supergateway/dist/index.js --stdio $FLOOR \
--outputTransport streamableHttp --stateful --port $PORT --logLevel none|10000|20000|200" ;;
        fastmcp) echo "$VENV/bin/python $HERE/fastmcp_proxy.py $PORT $FLOOR|2000|4000|50" ;;
        *) echo "unknown gateway cell $1" >&2; return 1 ;;
    esac
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

# The server runs in a session of its own, so that stopping it stops its upstream child too.
start_server() {
    port_open && { log "port $PORT is already in use"; return 1; }
    echo "--- $1: $2" >>"$LOG"
    setsid sh -c "exec $2" >>"$LOG" 2>&1 &
    SERVER_PID=$!
    local _
    for _ in $(seq 1 300); do
        port_open && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { log "$1 exited; see $LOG"; SERVER_PID=""; return 1; }
        sleep 0.1
    done
    log "$1 did not listen on $PORT within 30 s"
    return 1
}

stop_server() {
    [[ -n $SERVER_PID ]] || return 0
    kill -TERM -- "-$SERVER_PID" 2>/dev/null || true
    local _
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    for _ in $(seq 1 50); do port_open || break; sleep 0.1; done
}
trap stop_server EXIT INT TERM

# Machine-wide busy CPU % over one second (/proc/stat), as the harness measures it.
busy_pct() {
    local a b ta=0 tb=0 i
    read -r -a a < <(head -1 /proc/stat); sleep 1; read -r -a b < <(head -1 /proc/stat)
    for i in 1 2 3 4 5 6 7 8; do ta=$((ta + a[i])); tb=$((tb + b[i])); done
    local idle=$(((b[4] + b[5]) - (a[4] + a[5]))) total=$((tb - ta))
    echo $((total > 0 ? 100 * (total - idle) / total : 0))
}

# A compiler beside a cell halves its numbers on 2 cores: wait for quiet, up to QUIET_TIMEOUT.
wait_quiet() {
    local waited=0 busy
    while busy=$(busy_pct); [[ $busy -gt $QUIET_MAX ]]; do
        [[ $waited == 0 ]] && echo "$1: machine ${busy}% busy, waiting" >>"$RUN_DIR/quiet.log"
        waited=$((waited + 3)); sleep 2
        if [[ $waited -ge $QUIET_TIMEOUT ]]; then
            echo "$1: still ${busy}% busy after ${waited}s, running anyway" >>"$RUN_DIR/quiet.log"
            return 0
        fi
    done
}

# One cell: a fresh server, one bounded load, the server stopped.
cell() {
    local name=$1 c=$2 round=$3 cmd n1 n32 warmup
    IFS='|' read -r cmd n1 n32 warmup <<<"$(server_def "$name")"
    local label=$name/http_c$c/r$round n=$n1
    [[ $c == 32 ]] && n=$n32
    wait_quiet "$label"
    if start_server "$label" "$cmd"; then
        "$LG" http --url "$URL" --pid "$SERVER_PID" --label "$label" --json-out "$JSONL" \
            --max-seconds "$MAX_SECONDS" -n "$n" -c "$c" --warmup "$warmup" >/dev/null 2>>"$LOG" ||
            log "$label failed"
    fi
    stop_server
}

# ---------------------------------------------------------------- idle memory
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# Every process of the server's session: the server and the upstream it started.
tree_rss_kb() {
    local total=0 pid
    for pid in $(pgrep -s "$1"); do total=$((total + $(rss_kb "$pid"))); done
    echo "$total"
}

# VmRSS of a started, listening server that has served one session and then sat idle.
idle_rss() {
    local name=$1 cmd=$2
    start_server "$name/idle" "$cmd" || return 0
    "$LG" http --url "$URL" --pid "$SERVER_PID" -n 10 -c 1 --warmup 0 --max-seconds 5 \
        >/dev/null 2>>"$LOG" || true
    sleep 2
    echo "{\"label\":\"$name/idle\",\"rss_kb\":$(rss_kb "$SERVER_PID"),\"tree_rss_kb\":$(tree_rss_kb "$SERVER_PID")}" \
        >>"$RUN_DIR/idle.jsonl"
    stop_server
}

# ---------------------------------------------------------------- main
mkdir -p "$RUN_DIR"
install_peers
servers="floor mcp-serve"
peer_ok supergateway && servers="$servers supergateway"
peer_ok fastmcp && servers="$servers fastmcp"
log "cells: $servers, HTTP C=1 and C=32, $GATEWAY_ROUNDS round(s); results in $RUN_DIR"
for round in $(seq 1 "$GATEWAY_ROUNDS"); do
    for name in $servers; do
        cell "$name" 1 "$round"
        cell "$name" 32 "$round"
    done
done
log "idle memory: mcp serve with the stdio floor, bench_server"
: >"$RUN_DIR/idle.jsonl"
idle_rss mcp-serve "$MCP serve --http 127.0.0.1:$PORT --stdio -- $FLOOR"
idle_rss bench_server "$OURS --transport http --port $PORT"
