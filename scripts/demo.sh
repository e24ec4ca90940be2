#!/usr/bin/env bash
# Sets up what the demo needs (Python and policyc's runtime dependencies, nothing
# else) and runs it: the gateway with the shipped policies in front of an
# ordinary MCP server, driven by the official SDK client. The test command
# (scripts/test.sh) adds the development tools to the same .venv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
stamp=.venv/.policyc-runtime
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e .
    touch "$stamp"
fi
exec .venv/bin/python scripts/demo.py "$@"
