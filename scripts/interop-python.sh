#!/usr/bin/env bash
# Interop test against a real peer: the official Python MCP client (`mcp` 2.3.0 from PyPI)
# drives our `bookshop` example over stdio in each client mode (legacy, 2026-07-28, auto).
#
#   bash scripts/interop-python.sh
#
# Creates (or reuses) a venv at target/interop-venv, builds the example, runs
# tests/interop/python_bookshop.py, and exits with its status. The last line of output is
# `N passed, M failed`.
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

venv_ok() {
    [[ -x "$VENV/bin/python" ]] &&
        "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_VERSION')" \
            >/dev/null 2>&1
}

if venv_ok; then
    echo "interop: reusing $VENV (mcp $MCP_VERSION)"
else
    echo "interop: creating $VENV with $("$PYTHON" --version 2>&1), installing mcp==$MCP_VERSION"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "mcp==$MCP_VERSION"
    venv_ok || { echo "interop: mcp $MCP_VERSION is not importable in $VENV" >&2; exit 1; }
fi

echo "interop: cargo build --example bookshop"
cargo build --example bookshop

# Each client mode has its own 30 s budget inside the script; this outer bound only catches a
# wedged interpreter (e.g. a shutdown that never returns).
rc=0
PYTHONUNBUFFERED=1 timeout --kill-after=10 300 \
    "$VENV/bin/python" tests/interop/python_bookshop.py "$BOOKSHOP" || rc=$?
if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    echo "interop: python_bookshop.py did not finish within 300 s (exit $rc)" >&2
fi
exit "$rc"
