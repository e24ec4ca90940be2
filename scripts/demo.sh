#!/usr/bin/env bash
# Sets everything up and runs the demo: the gateway with the shipped policies in
# front of an ordinary MCP server, driven by the official SDK client.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/bootstrap.sh"
cd "$root"
exec .venv/bin/python scripts/demo.py "$@"
