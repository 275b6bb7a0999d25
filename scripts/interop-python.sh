#!/usr/bin/env bash
# Interop tests against a real peer, the official Python MCP SDK (`mcp` 2.3.0 from PyPI):
#   1. the Python client drives our `bookshop` example in each client mode (legacy,
#      2026-07-28, auto) over stdio, http and https, the last over HTTP/1.1 and HTTP/2 (a CA
#      made for the run by tests/interop/make_test_ca.py, trusted through httpx2's `verify=`):
#      tests/interop/python_bookshop.py;
#      the same checks through `mcp serve --http … --stdio <bookshop>`, which must answer
#      exactly as bookshop does;
#   2. our client over Streamable HTTP: our client (`examples/http_client.rs`) drives the Python SDK's own HTTP
#      server (tests/interop/python_http_server.py) in each era (handshake, modern, auto), also
#      behind TLS (uvicorn's `ssl_*` options, the same test CA, trusted by our client through
#      `SSL_CERT_FILE`).
#
#   bash scripts/interop-python.sh
#
# Creates (or reuses) a venv at target/interop-venv, builds the examples, runs both parts, and
# exits non-zero if either failed. The last line of output is the total, `N passed, M failed`.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION=2.3.0
VENV=target/interop-venv
TARGET_DIR=${CARGO_TARGET_DIR:-target}
BOOKSHOP="$TARGET_DIR/debug/examples/bookshop"

# The SDK needs Python >= 3.10; prefer an explicit 3.11 when there is one.
PYTHON=${PYTHON:-}
if [[ -z "$PYTHON" ]]; then
    if command -v python3.11 >/dev/null 2>&1; then PYTHON=python3.11; else PYTHON=python3; fi
fi

# `httpx2[http2]` adds the `h2` package (and `hpack`, `hyperframe`), so that the Python
# client can also reach bookshop over HTTP/2.
venv_ok() {
    [[ -x "$VENV/bin/python" ]] &&
        "$VENV/bin/python" -c "import importlib.metadata as m, sys, h2; sys.exit(m.version('mcp') != '$MCP_VERSION')" \
            >/dev/null 2>&1
}

if venv_ok; then
    echo "interop: reusing $VENV (mcp $MCP_VERSION)"
else
    echo "interop: creating $VENV with $("$PYTHON" --version 2>&1), installing mcp==$MCP_VERSION"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        "mcp==$MCP_VERSION" "httpx2[http2]"
    venv_ok || { echo "interop: mcp $MCP_VERSION is not importable in $VENV" >&2; exit 1; }
fi

echo "interop: cargo build --example bookshop --example http_client, and the mcp command"
cargo build --example bookshop --example http_client
cargo build -p modelcontext-cli

# Every check prints `ok ...` or `FAIL ...`; the log collects both parts for the total.
LOG=$(mktemp)
CERTS=$(mktemp -d)
SERVER_PID=""
TLS_SERVER_PID=""
stop_server() {
    if [[ -n "$1" ]]; then
        kill "$1" 2>/dev/null || true
        wait "$1" 2>/dev/null || true
    fi
}
GATEWAY_PID=""
cleanup() {
    stop_server "$SERVER_PID"
    stop_server "$TLS_SERVER_PID"
    stop_server "$GATEWAY_PID"
    rm -f "$LOG" "$LOG.server" "$LOG.tls-server" "$LOG.gateway"
    rm -rf "$CERTS"
}
trap cleanup EXIT

# Each client mode has its own 30 s budget inside the script; this outer bound only catches a
# wedged interpreter (e.g. a shutdown that never returns).
free_port() {
    "$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits (at most 30 s) until something listens on $1, while process $2 lives.
wait_for_port() {
    for _ in $(seq 300); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# The Python client drives our bookshop over stdio (it spawns it) and over Streamable HTTP,
# plain and TLS; then over TLS again, in HTTP/2.
rc=0
BOOKSHOP_PORT=$(free_port)
"$BOOKSHOP" --http "127.0.0.1:$BOOKSHOP_PORT" >"$LOG.server" 2>&1 &
SERVER_PID=$!
targets=("$BOOKSHOP")
if wait_for_port "$BOOKSHOP_PORT" "$SERVER_PID"; then
    targets+=("http://127.0.0.1:$BOOKSHOP_PORT/mcp")
else
    echo "FAIL http bookshop_start: bookshop --http did not listen on $BOOKSHOP_PORT" | tee -a "$LOG"
    cat "$LOG.server" >&2
fi
GATEWAY_PORT=$(free_port)
"$TARGET_DIR/debug/mcp" serve --http "127.0.0.1:$GATEWAY_PORT" --stdio "$BOOKSHOP" >"$LOG.gateway" 2>&1 &
GATEWAY_PID=$!
if wait_for_port "$GATEWAY_PORT" "$GATEWAY_PID"; then
    targets+=("http://127.0.0.1:$GATEWAY_PORT/mcp")
else
    echo "FAIL http gateway_start: mcp serve did not listen on $GATEWAY_PORT" | tee -a "$LOG"
    cat "$LOG.gateway" >&2
fi
if "$VENV/bin/python" tests/interop/make_test_ca.py "$CERTS"; then
    TLS_PORT=$(free_port)
    "$BOOKSHOP" --http "127.0.0.1:$TLS_PORT" --tls-cert "$CERTS/cert.pem" --tls-key "$CERTS/key.pem" \
        >"$LOG.tls-server" 2>&1 &
    TLS_SERVER_PID=$!
    if wait_for_port "$TLS_PORT" "$TLS_SERVER_PID"; then
        targets+=("https://localhost:$TLS_PORT/mcp")
    else
        echo "FAIL https bookshop_start: bookshop --tls-cert did not listen on $TLS_PORT" | tee -a "$LOG"
        cat "$LOG.tls-server" >&2
    fi
else
    echo "FAIL https test_ca: make_test_ca.py could not write a certificate" | tee -a "$LOG"
fi
PYTHONUNBUFFERED=1 timeout --kill-after=10 420 \
    "$VENV/bin/python" tests/interop/python_bookshop.py --cafile "$CERTS/ca.pem" "${targets[@]}" \
    | tee -a "$LOG" || rc=${PIPESTATUS[0]}
if [[ -n "${TLS_PORT:-}" && $rc -ne 124 && $rc -ne 137 ]]; then
    PYTHONUNBUFFERED=1 timeout --kill-after=10 120 "$VENV/bin/python" tests/interop/python_bookshop.py \
        --cafile "$CERTS/ca.pem" --http2 "https://localhost:$TLS_PORT/mcp" \
        | tee -a "$LOG" || rc=${PIPESTATUS[0]}
fi
stop_server "$SERVER_PID"
stop_server "$TLS_SERVER_PID"
stop_server "$GATEWAY_PID"
SERVER_PID=""
TLS_SERVER_PID=""
GATEWAY_PID=""
if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    echo "interop: python_bookshop.py did not finish within 420 s (exit $rc)" >&2
fi

# Part 2: our HTTP client against the Python SDK's HTTP server, on a free loopback port:
# Streamable HTTP in every era, then the 2024-11-05 HTTP+SSE transport (client fallback).
HTTP_CLIENT="$TARGET_DIR/debug/examples/http_client"

# drive <server flags or ""> <path> <era>...: start the server, run the example once per era,
# stop the server. Failures are counted from the log's FAIL lines. $SCHEME is http or https.
SCHEME=http
drive() {
    local flag=$1 path=$2 port era http_rc
    shift 2
    port=$(free_port)
    echo "interop: Python SDK server ${flag:-(streamable HTTP)} on 127.0.0.1:$port"
    # shellcheck disable=SC2086 # an empty flag must vanish
    PYTHONUNBUFFERED=1 "$VENV/bin/python" tests/interop/python_http_server.py "$port" $flag \
        >"$LOG.server" 2>&1 &
    SERVER_PID=$!
    # Poll the port (at most 30 s); stop early if the server died.
    if ! wait_for_port "$port" "$SERVER_PID"; then
        echo "FAIL http server_start: the Python server did not listen on $port" | tee -a "$LOG"
        cat "$LOG.server" >&2
    else
        for era in "$@"; do
            http_rc=0
            timeout --kill-after=5 60 "$HTTP_CLIENT" "$SCHEME://127.0.0.1:$port$path" --era "$era" \
                | tee -a "$LOG" || http_rc=${PIPESTATUS[0]}
            # Exit 1 comes with FAIL lines; anything else (a hang, a crash) needs its own.
            if [[ $http_rc -eq 124 || $http_rc -eq 137 ]]; then
                echo "FAIL $era http_client: did not finish within 60 s" | tee -a "$LOG"
            elif [[ $http_rc -gt 1 ]]; then
                echo "FAIL $era http_client: exited with status $http_rc" | tee -a "$LOG"
            fi
        done
    fi
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
drive "" /mcp handshake modern auto
drive --sse /sse legacy-sse

# The same server behind TLS, with the certificate made above by make_test_ca.py, trusted by
# our client through SSL_CERT_FILE as curl and OpenSSL would be.
if [[ -s "$CERTS/ca.pem" ]]; then
    SCHEME=https
    SSL_CERT_FILE="$CERTS/ca.pem" drive "--tls $CERTS/cert.pem $CERTS/key.pem" /mcp \
        handshake modern auto
    SCHEME=http
else
    echo "FAIL https certificates: make_test_ca.py wrote no test CA" | tee -a "$LOG"
fi

# Our client (through the `mcp` command) against the same Python server over stdio.
MCP="$TARGET_DIR/debug/mcp"
PY_STDIO="$VENV/bin/python tests/interop/python_http_server.py --stdio"
check_stdio() {
    local era=$1 name=$2 want_rc=$3 want=$4 out rc=0
    shift 4
    out=$(timeout 60 "$MCP" --stdio "$PY_STDIO" --era "$era" "$@" 2>&1) || rc=$?
    if [[ $rc -eq $want_rc && "$out" == *"$want"* ]]; then
        echo "ok python-stdio $era $name" | tee -a "$LOG"
    else
        echo "FAIL python-stdio $era $name: exit $rc, output: ${out//$'\n'/ }" | tee -a "$LOG"
    fi
}
for era in handshake auto; do
    check_stdio "$era" tools 0 "add" tools
    check_stdio "$era" call.add 0 "5" call add a=2 b=3
    check_stdio "$era" call.fail 2 "boom" call fail message=boom
done

passed=$(grep -c '^ok ' "$LOG" || true)
failed=$(grep -c '^FAIL ' "$LOG" || true)
[[ $failed -eq 0 ]] || rc=1
echo "interop total (both parts):"
echo "$passed passed, $failed failed"
exit "$rc"
