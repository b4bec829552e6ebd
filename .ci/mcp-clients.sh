#!/usr/bin/env bash
# Installs the MCP clients the `tackle-mcp` tests drive: the official Python SDK in a venv
# (target/mcp-venv) and the official TypeScript SDK (target/mcp-node). Pinned versions, so a
# client release cannot change what CI tests. Idempotent: a finished install is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

PY_MCP=2.3.0
PY_JSONSCHEMA=4.26.0
TS_SDK=1.32.2

start=$(date +%s)
venv=target/mcp-venv
stamp="$venv/.installed-$PY_MCP-$PY_JSONSCHEMA"
if [ ! -f "$stamp" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP" "jsonschema==$PY_JSONSCHEMA"
    touch "$stamp"
fi

node=target/mcp-node
if [ ! -f "$node/.installed-$TS_SDK" ]; then
    mkdir -p "$node"
    npm install --silent --no-audit --no-fund --prefix "$node" "@modelcontextprotocol/sdk@$TS_SDK"
    touch "$node/.installed-$TS_SDK"
fi
echo "mcp clients ready in $(( $(date +%s) - start ))s" >&2
