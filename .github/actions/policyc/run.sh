#!/usr/bin/env bash
# The policyc action's steps (action.yml): `install`, then `check`.
# Inputs come as environment variables: POLICYC_PACKAGE, POLICYC_PATHS, POLICYC_SARIF,
# POLICYC_RUN_TESTS. tests/cli/test_github_action.py runs this script on a throwaway repo.
set -euo pipefail

case "${1:-}" in
install)
    # Default: policyc from the commit the action was taken from (two levels above it).
    package="${POLICYC_PACKAGE:-}"
    if [ -z "$package" ]; then
        package="$(cd "$(dirname "$0")/../../.." && pwd)"
    fi
    python -m pip install --quiet "$package"
    policyc --version
    ;;
check)
    read -r -a paths <<<"${POLICYC_PATHS:-.}"
    sarif="${POLICYC_SARIF:-policyc.sarif}"
    failed=()
    echo "::group::policyc check --strict"
    # SARIF for code scanning; the same findings as annotations on the pull request.
    policyc check --strict --format sarif "${paths[@]}" >"$sarif" || failed+=("check")
    policyc check --strict --format github "${paths[@]}" || true
    echo "::endgroup::"
    echo "::group::policyc fmt --check"
    policyc fmt --check "${paths[@]}" || failed+=("fmt")
    echo "::endgroup::"
    if [ "${POLICYC_RUN_TESTS:-true}" = "true" ]; then
        echo "::group::policyc test"
        policyc test "${paths[@]}" || failed+=("test")
        echo "::endgroup::"
    fi
    if [ "${#failed[@]}" -gt 0 ]; then
        echo "::error::policyc: ${failed[*]} failed (SARIF report: $sarif)"
        exit 1
    fi
    echo "policyc: check, fmt and tests passed (SARIF report: $sarif)"
    ;;
*)
    echo "usage: run.sh install|check" >&2
    exit 2
    ;;
esac
