"""What a list filter hides cannot be used, whatever the client listed: on every front.

The attacker knows the hidden names. It calls them without listing, after listing
page 1 only (the backend pages, the hidden element is on page 2), with its pages
spread over `--stateless` replicas, or, on the 2026-07-28 front, after another
caller listed page 1. The backend (paging_backend.py) records what it ran.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from balancer import balanced_client, replicas
from gateway_harness import HERE, ROOT, calls, local_front_client, local_http_gateway, raw_request
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import FileUrl

pytestmark = pytest.mark.e2e

LIMIT = 90
PAGING = HERE / "paging_backend.py"
POLICIES = [ROOT / "policies" / "tool-filter.policy", HERE / "policies" / "hidden_items.policy"]
FRONTS = ["stdio", "http", "stateless", "2026"]
ACCEPT = {"Accept": "application/json, text/event-stream"}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""One JSON-RPC request: ``{"result": ...}`` or ``{"error": ...}``."""


def paging(log: Path, mode: str = "ok") -> str:
    return f"pg={sys.executable} {PAGING} {log} {mode}"


def ran(log: Path) -> list[dict[str, Any]]:
    """What the backend ran, its pages left out."""
    return [entry for entry in calls(log) if "list" not in entry]


def pages(log: Path, method: str) -> list[int]:
    return [entry["page"] for entry in calls(log) if entry.get("list") == method]


def _sdk(client: Client) -> Call:
    async def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"result": await raw_request(client, method, params)}
        except MCPError as err:
            return {"error": {"code": err.code, "message": err.message, "data": err.data}}

    return call


def _modern(http: httpx2.AsyncClient, url: str) -> Call:
    """A 2026-07-28 client as the wire has it: one self-contained POST a request."""
    ids = itertools.count(1)

    async def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        headers = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
        if method in _NAMED:
            headers["Mcp-Name"] = params[_NAMED[method]]
        body = {"jsonrpc": "2.0", "id": next(ids), "method": method}
        body["params"] = {**params, "_meta": ENVELOPE}
        reply = await http.post(url, json=body, headers=headers)
        answer: dict[str, Any] = reply.json()
        return answer

    return call


@asynccontextmanager
async def callers(front: str, *args: str) -> AsyncIterator[tuple[Call, Call]]:
    """(a caller that lists, the attacker): one session on the session fronts; on the
    2026-07-28 front, which has no sessions, two clients of one gateway."""
    if front in ("stdio", "http"):
        async with local_front_client(front, *args, policies=POLICIES) as client:
            yield _sdk(client), _sdk(client)
        return
    if front == "stateless":
        with replicas(2, *args, policies=POLICIES) as ports:
            async with balanced_client(ports) as (client, _):
                yield _sdk(client), _sdk(client)
        return
    async with (
        local_http_gateway(*args, policies=POLICIES) as url,
        httpx2.AsyncClient(timeout=60) as a,
        httpx2.AsyncClient(timeout=60) as b,
    ):
        yield _modern(a, url), _modern(b, url)


def refusal(answer: dict[str, Any]) -> str:
    assert "error" in answer, answer
    assert answer["error"]["code"] == -32602
    items = answer["error"]["data"]["validationErrors"]
    return str(items[0]["message"])


async def attack(call: Call) -> None:
    """Every hidden element refused; what is shown served; what no list shows refused."""
    hidden = refusal(await call("tools/call", {"name": "debug_dump", "arguments": {}}))
    assert hidden == "this tool is hidden by policy"
    assert "hidden" in refusal(await call("prompts/get", {"name": "internal_prompt"}))
    assert "hidden" in refusal(await call("resources/read", {"uri": "secret://keys"}))
    unknown = refusal(await call("tools/call", {"name": "not_listed", "arguments": {}}))
    assert unknown == "no list shows this tool"
    assert "result" in await call("tools/call", {"name": "echo", "arguments": {}})
    assert "result" in await call("prompts/get", {"name": "greeting"})
    assert "result" in await call("resources/read", {"uri": "memo://public"})
    assert "result" in await call("resources/read", {"uri": "note://7"})  # a listed template


SERVED = [
    {"call": "echo", "arguments": {}},
    {"get": "greeting"},
    {"read": "memo://public"},
    {"read": "note://7"},
]


@pytest.mark.parametrize("front", FRONTS)
async def test_hidden_items_are_refused_though_never_listed(tmp_path: Path, front: str) -> None:
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with callers(front, "--backend", paging(log)) as (_, call):
            await attack(call)
    assert ran(log) == SERVED
    for method in ("tools/list", "prompts/list", "resources/list"):
        assert pages(log, method)[:2] == [1, 2], method  # the gateway's own, every page
    assert pages(log, "resources/templates/list")[:1] == [1]  # one page


@pytest.mark.parametrize("front", FRONTS)
async def test_hidden_items_are_refused_after_page_one_only(tmp_path: Path, front: str) -> None:
    """Page 1 of each list shows only the allowed element and a cursor; the hidden one is on
    page 2, which the client never asks for (on `--stateless`, the pages and calls land on
    alternating replicas; on 2026-07-28, another caller listed)."""
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with callers(front, "--backend", paging(log)) as (lister, call):
            for method, key in (
                ("tools/list", "tools"),
                ("prompts/list", "prompts"),
                ("resources/list", "resources"),
            ):
                first = (await lister(method, {}))["result"]
                assert len(first[key]) == 1 and first["nextCursor"] == "1"
            await attack(call)
    assert ran(log) == SERVED


async def test_pages_spread_over_replicas_decide_nothing(tmp_path: Path) -> None:
    """Page 1 on one replica, page 2 on the other: neither saw the whole list from the
    client, and each refuses the hidden tool."""
    log = tmp_path / "calls.log"
    with replicas(2, "--backend", paging(log), policies=POLICIES) as ports, anyio.fail_after(LIMIT):
        async with balanced_client(ports) as (client, balancer):
            call = _sdk(client)
            first = (await call("tools/list", {}))["result"]
            second = (await call("tools/list", {"cursor": first["nextCursor"]}))["result"]
            assert second["tools"] == []  # the filter took debug_dump out of page 2
            for _ in ports:
                answer = await call("tools/call", {"name": "debug_dump", "arguments": {}})
                assert refusal(answer) == "this tool is hidden by policy"
        served = balancer.served
    lists = [port for port, method, _ in served if method == "tools/list"]
    refused = [port for port, method, _ in served if method == "tools/call"]
    assert len(set(lists)) == 2 and set(refused) == set(ports)
    assert ran(log) == []


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("mode", ["fail", "hang"])
async def test_a_listing_that_fails_refuses_the_call(tmp_path: Path, front: str, mode: str) -> None:
    """Page 2 errs, or never comes: the gateway cannot tell what is hidden, so the call is
    refused, in words that echo nothing the backend said."""
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        args = ("--backend", paging(log, mode), "--backend-timeout", "3")
        async with callers(front, *args) as (_, call):
            for method, params in (
                ("tools/call", {"name": "echo", "arguments": {}}),
                ("prompts/get", {"name": "greeting"}),
                ("resources/read", {"uri": "memo://public"}),
            ):
                answer = await call(method, params)
                assert "error" in answer, answer
                error = answer["error"]
                assert (error["code"], error["message"]) == (-32603, "Listing failed")
                assert error["data"]["listing"] == method.split("/")[0] + "/list"
                assert "page store" not in str(error)
    assert ran(log) == []


async def test_a_backend_error_that_reads_as_a_block_is_not_the_policys(tmp_path: Path) -> None:
    """Whether a policy refused is the gateway's own knowledge, never a message it reads:
    a backend that answers its lists with the SEP's block error is left out of the
    merged list as any failing backend is (it cannot refuse the other backends' lists),
    and alone it refuses a call as a listing that failed, not in words of its own."""
    good = f"good={sys.executable} {PAGING} {tmp_path / 'good.log'} ok"
    liar = f"liar={sys.executable} {PAGING} {tmp_path / 'liar.log'} lie"
    with anyio.fail_after(LIMIT):
        async with callers("stdio", "--backend", good, "--backend", liar) as (call, _):
            listed = await call("tools/list", {})
        async with callers("stdio", "--backend", liar) as (call, _):
            refused = await call("tools/call", {"name": "echo", "arguments": {}})
    assert "result" in listed, listed
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["echo"]
    error = refused["error"]
    assert (error["code"], error["message"]) == (-32603, "Listing failed")
    assert "the policy says no" not in str(error)


def _roots_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(the directory the backend was started with, the client's root, a file outside it)."""
    served = tmp_path / "served"
    mine = served / "mine"
    mine.mkdir(parents=True)
    (mine / "note.txt").write_text("mine")
    outside = served / "other" / "secret.txt"
    outside.parent.mkdir()
    outside.write_text("not yours")
    return served, mine, outside


def _client_roots(root: Path) -> Callable[[Any], Awaitable[types.ListRootsResult]]:
    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(root.as_uri()))])

    return roots


def _text(answer: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in answer["result"]["content"])


async def test_roots_reach_a_backend_through_a_stateful_gateway(tmp_path: Path) -> None:
    """The control: a backend that limits itself by roots (as server-filesystem does) gets
    the client's, and refuses a file outside them though its own directory holds it. It
    asks on its first call (`fs-lazy`), so the request rides on that call's stream and
    the call waits for the roots; a backend that asks right after the handshake, before
    the client opened its stream, is test_gateway_late_stream.py's."""
    served, mine, outside = _roots_tree(tmp_path)
    log = tmp_path / "calls.log"
    backend = f"fs={sys.executable} {PAGING} {log} fs-lazy {served}"
    with anyio.fail_after(LIMIT):
        async with local_front_client(
            "http", "--backend", backend, policies=POLICIES, list_roots_callback=_client_roots(mine)
        ) as client:
            call = _sdk(client)
            inside = await call(
                "tools/call", {"name": "read_file", "arguments": {"path": str(mine / "note.txt")}}
            )
            assert _text(inside) == "mine"
            denied = await call(
                "tools/call", {"name": "read_file", "arguments": {"path": str(outside)}}
            )
            assert _text(denied) == "access denied"


async def test_stateless_refuses_a_backend_that_asks_for_roots(tmp_path: Path) -> None:
    """`--stateless` cannot carry the backend's roots/list to the client; a backend told
    nothing would fall back to its own, wider, directory. The gateway refuses to front it."""
    served, mine, outside = _roots_tree(tmp_path)
    log = tmp_path / "calls.log"
    backend = f"fs={sys.executable} {PAGING} {log} fs {served}"
    with replicas(1, "--backend", backend, policies=POLICIES) as ports, anyio.fail_after(LIMIT):
        async with balanced_client(ports, list_roots_callback=_client_roots(mine)) as (client, _):
            answer = await _sdk(client)(
                "tools/call", {"name": "read_file", "arguments": {"path": str(outside)}}
            )
    assert answer["error"]["code"] == -32600
    assert answer["error"]["message"] == "Backend needs roots"
    assert "--stateless" in answer["error"]["data"]["reason"]
    assert ran(log) == [{"roots": None, "error": True}]  # asked, told no; ran nothing


async def test_first_calls_together_list_once(tmp_path: Path) -> None:
    """Calls that arrive together before anything was listed wait for one listing."""
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with callers("stdio", "--backend", paging(log, "slow")) as (_, call):
            answers: list[dict[str, Any]] = []

            async def one() -> None:
                answers.append(await call("tools/call", {"name": "echo", "arguments": {}}))

            async with anyio.create_task_group() as tg:
                for _ in range(8):
                    tg.start_soon(one)
    assert all("result" in answer for answer in answers) and len(answers) == 8
    assert pages(log, "tools/list") == [1, 2]
