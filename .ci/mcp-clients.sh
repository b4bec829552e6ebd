#!/usr/bin/env bash
# Installs the MCP clients the `tackle-mcp` tests drive, and the MCP servers the
# `tackle-mcp-client` tests consume: the official Python SDK in a venv
# (target/mcp-venv) and the official TypeScript SDK (target/mcp-node). Pinned versions, so a
# client release cannot change what CI tests. Idempotent: a finished install is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

PY_MCP=2.3.0
PY_JSONSCHEMA=4.26.0
TS_SDK=1.32.2
# MCP servers tackle consumes in the tackle-mcp-client tests.
SERVER_EVERYTHING=2026.8.31
SERVER_FILESYSTEM=2026.8.31

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
node_stamp="$node/.installed-$TS_SDK-$SERVER_EVERYTHING-$SERVER_FILESYSTEM"
if [ ! -f "$node_stamp" ]; then
    mkdir -p "$node"
    npm install --silent --no-audit --no-fund --prefix "$node" \
        "@modelcontextprotocol/sdk@$TS_SDK" \
        "@modelcontextprotocol/server-everything@$SERVER_EVERYTHING" \
        "@modelcontextprotocol/server-filesystem@$SERVER_FILESYSTEM"
    touch "$node_stamp"
fi
echo "mcp clients ready in $(( $(date +%s) - start ))s" >&2
