"""The SEP conformance fixtures ``protocol/list-*`` and ``protocol/invoke-*`` over stdio.

Adapter: each fixture's interceptors are bound to the in-code behaviours of
``fixture_providers`` and served by their own server process; list and invoke
steps go through the SDK client and are compared in canonical form.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError
from server_harness import list_interceptors, request, stdio_client

from policy_engine.conformance import SUITE_DIR

FIXTURES = SUITE_DIR / "fixtures" / "protocol"
WANTED = sorted(
    path for path in FIXTURES.glob("*.json") if path.name.startswith(("list-", "invoke-"))
)


def _strip(value: Any, volatile: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, volatile) for k, v in value.items() if k not in volatile}
    if isinstance(value, list):
        return [_strip(v, volatile) for v in value]
    return value


def canonical(value: Any) -> str:
    """JCS for this ASCII, small-integer data: sorted keys, no whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def server_groups(fixtures: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Fixtures that can share one server process, to keep the test quick.

    A fixture with a ``list`` step sees every registered interceptor, so it gets
    a server of its own; invoke-only fixtures call interceptors by name and can
    share a server whenever their registrations agree name for name.
    """
    groups: list[list[dict[str, Any]]] = []
    shared: list[dict[str, Any]] = []
    registered: dict[str, dict[str, Any]] = {}
    for fixture in fixtures:
        specs = {spec["name"]: spec for spec in fixture["interceptors"]}
        lists = any(step["op"] == "list" for step in fixture["steps"])
        clash = any(registered.get(name, spec) != spec for name, spec in specs.items())
        if lists or clash:
            groups.append([fixture])
            continue
        registered.update(specs)
        shared.append(fixture)
    return [*groups, shared] if shared else groups


async def run_group(group: list[dict[str, Any]], specs_file: Path) -> dict[str, list[str]]:
    registered: dict[str, dict[str, Any]] = {}
    for fixture in group:
        registered.update({spec["name"]: spec for spec in fixture["interceptors"]})
    specs_file.write_text(json.dumps(list(registered.values())))
    failures: dict[str, list[str]] = {}
    async with stdio_client("--specs", str(specs_file)) as client:
        for fixture in group:
            failures[fixture["id"]] = await run_steps(client, fixture)
    return failures


async def run_steps(client: Any, fixture: dict[str, Any]) -> list[str]:
    volatile = set(fixture["volatile"])
    failures: list[str] = []
    for index, step in enumerate(fixture["steps"]):
        where = f"step {index}"
        expect = step["expect"]
        if step["op"] == "list":
            actual: Any = {"interceptors": await list_interceptors(client, step["event"])}
        elif step["op"] == "invoke":
            try:
                actual = await request(client, "interceptor/invoke", step["params"])
            except MCPError as exc:
                if exc.error.code != expect.get("errorCode"):
                    failures.append(f"{where}: error {exc.error.code}, expected {expect}")
                continue
            if "errorCode" in expect:
                failures.append(f"{where}: succeeded, expected error {expect['errorCode']}")
                continue
        else:
            failures.append(f"{where}: op {step['op']} is not served here")
            continue
        got = canonical(_strip(actual, volatile))
        if got != expect["canonical"]:
            failures.append(f"{where}: {got} != {expect['canonical']}")
    return failures


async def test_protocol_list_and_invoke_fixtures(tmp_path: Path) -> None:
    fixtures = [json.loads(path.read_text()) for path in WANTED]
    assert len(fixtures) == 7
    groups = server_groups(fixtures)
    assert len(groups) == 3
    failures: dict[str, list[str]] = {}

    async def one(index: int, group: list[dict[str, Any]]) -> None:
        failures.update(await run_group(group, tmp_path / f"group-{index}.json"))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for index, group in enumerate(groups):
                tg.start_soon(one, index, group)
    assert sorted(failures) == sorted(f["id"] for f in fixtures)
    assert {name: problems for name, problems in failures.items() if problems} == {}
