"""The SDK client over streamable HTTP (stateful and stateless), auth, DNS-rebinding checks."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from server_harness import (
    HttpServer,
    capability,
    http_client,
    http_server,
    invoke,
    list_interceptors,
)

pytestmark = pytest.mark.e2e

EXTENSION = "io.modelcontextprotocol/interceptors"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_client_over_http(shared_http: HttpServer, mode: str) -> None:
    with anyio.fail_after(30):
        async with http_client(shared_http.url, mode) as client:
            assert capability(client)["extensions"][EXTENSION]["supportedEvents"][0] == "tools/call"
            assert (
                capability(client)["experimental"][EXTENSION]["supportedEvents"][0] == "tools/call"
            )
            assert len(await list_interceptors(client)) == 10
            assert (await invoke(client, name="uppercase-note"))["payload"]["arguments"] == {
                "note": "HELLO"
            }
            with pytest.raises(MCPError) as caught:
                await invoke(client, name="slow", timeoutMs=20)
            assert caught.value.error.code == -32000
            with pytest.raises(MCPError) as caught:
                await invoke(client, name="crash")
            assert caught.value.error.code == -32603


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stateless_mode_serves_every_request_alone(
    shared_stateless_http: HttpServer, mode: str
) -> None:
    with anyio.fail_after(30):
        async with http_client(shared_stateless_http.url, mode) as client:
            assert EXTENSION in capability(client)["extensions"]
            for _ in range(3):
                assert (await invoke(client, name="deny-all"))["valid"] is False
        async with httpx2.AsyncClient(timeout=30) as http:
            # No session id is handed out, so any instance can take the next request.
            response = await http.post(shared_stateless_http.url, json=INIT, headers=HEADERS)
            assert response.status_code == 200
            assert "mcp-session-id" not in response.headers


async def test_dns_rebinding_protection_is_on(shared_http: HttpServer) -> None:
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=30) as http:
            evil_host = {**HEADERS, "host": "attacker.example:80"}
            assert (
                await http.post(shared_http.url, json=INIT, headers=evil_host)
            ).status_code == 421
            evil_origin = {**HEADERS, "origin": "http://attacker.example"}
            assert (
                await http.post(shared_http.url, json=INIT, headers=evil_origin)
            ).status_code == 403
            assert (await http.post(shared_http.url, json=INIT, headers=HEADERS)).status_code == 200


async def test_bearer_token_is_required() -> None:
    env = {"POLICYC_TEST_TOKEN": "s3cret-token"}
    with http_server("--auth-env", "POLICYC_TEST_TOKEN", env=env) as server, anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=30) as http:
            missing = await http.post(server.url, json=INIT, headers=HEADERS)
            assert missing.status_code == 401
            assert missing.headers["www-authenticate"].startswith("Bearer")
            assert missing.json()["error"]["data"] == {"reason": "missing bearer token"}
            wrong = await http.post(
                server.url, json=INIT, headers={**HEADERS, "authorization": "Bearer nope"}
            )
            assert wrong.status_code == 401
            assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
            basic = await http.post(
                server.url, json=INIT, headers={**HEADERS, "authorization": "Basic s3cret-token"}
            )
            assert basic.status_code == 401
        async with http_client(server.url, token="s3cret-token") as client:
            assert (await invoke(client, name="allow-all"))["valid"] is True


async def test_garbage_and_deep_nesting_get_an_answer_over_http(shared_http: HttpServer) -> None:
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(shared_http.url, json=INIT, headers=HEADERS)
            session = {
                **HEADERS,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            garbage = await http.post(shared_http.url, content=b"not json", headers=session)
            assert garbage.status_code == 400
            assert garbage.json()["error"] == {
                "code": -32700,
                "message": "Parse error",
                "data": {"reason": "not valid JSON"},
            }
            nested = "[" * 600 + "]" * 600
            body = (
                '{"jsonrpc":"2.0","id":3,"method":"interceptor/invoke","params":{"name":"allow-all",'
                f'"event":"tools/call","phase":"request","payload":{nested}}}}}'
            )
            deep = await http.post(shared_http.url, content=body.encode(), headers=session)
            assert deep.status_code == 400
            assert deep.json() == {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {
                    "code": -32600,
                    "message": "Invalid Request",
                    "data": {"reason": "nesting too deep"},
                },
            }
            leaky = b'{"jsonrpc": "2.0", "id": 4, "method": 5, "params": {"k": "hunter2"}}'
            refused = await http.post(shared_http.url, content=leaky, headers=session)
            assert refused.status_code == 400
            assert refused.json()["id"] == 4
            assert refused.json()["error"]["code"] == -32600
            assert "hunter2" not in refused.text
            fine = await http.post(
                shared_http.url, json={"jsonrpc": "2.0", "id": 5, "method": "ping"}, headers=session
            )
            assert fine.json() == {"jsonrpc": "2.0", "id": 5, "result": {}}
