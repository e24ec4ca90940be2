#!/usr/bin/env bash
# Creates .venv (once) and installs policyc with its dev tools into it, and what
# the tests drive for real (npm packages, Debian packages). The demo needs none
# of this: scripts/demo.sh installs the runtime alone.
# Sourced by the other scripts; safe to run again, it only installs what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
stamp=.venv/.policyc-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[dev]"
    touch "$stamp"
fi
if [ -f package.json ] && { [ ! -d node_modules ] || [ package.json -nt node_modules ]; }; then
    npm install --silent --no-audit --no-fund
fi
# Debian packages some tests drive for real: chromium and chromedriver (the
# playground's browser test) and redis-server (flow state shared by replicas).
# Installed only when missing, so repeated runs stay fast.
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
command -v redis-server >/dev/null || missing+=(redis-server)
# tests/observability/test_prometheus.py scrapes the gateway with a real Prometheus server.
command -v prometheus >/dev/null || missing+=(prometheus)
if [ "${#missing[@]}" -gt 0 ]; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "bootstrap: install ${missing[*]} (Debian packages) for the tests that use them" >&2
    fi
fi
