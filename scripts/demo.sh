#!/usr/bin/env bash
# Sets everything up and runs the demo on the shipped policies.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/bootstrap.sh"
cd "$root"
exec .venv/bin/python -m policy_engine.demo "$@"
