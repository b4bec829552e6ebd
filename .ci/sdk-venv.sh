#!/usr/bin/env bash
# The Python venv in which tackle-formats' tests check every exported definition and result
# with the providers' official SDKs (crates/formats/tests/sdk.rs). Pinned versions, nothing
# cached: a fresh venv each time, so a result never depends on what a machine had before.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${TACKLE_SDK_VENV:-.ci/sdk-venv}"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir \
    openai==3.60.0 \
    anthropic==2.16.0 \
    google-genai==3.6.1 \
    mcp==2.3.0
