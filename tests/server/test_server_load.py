"""Many concurrent HTTP clients, every invoke answered correctly.

The issue's full size (50 clients x 200 invokes) runs in ``bench/bench_server.py``;
here a smaller load keeps the suite quick while staying truly concurrent.
"""

from __future__ import annotations

import anyio
import pytest
from server_harness import HttpServer, http_client, invoke

pytestmark = pytest.mark.e2e

CLIENTS = 12
PER_CLIENT = 15


@pytest.mark.parametrize(("clients", "per_client"), [(CLIENTS, PER_CLIENT)])
async def test_concurrent_http_clients(
    shared_http: HttpServer, clients: int, per_client: int
) -> None:
    answered: list[int] = []

    async def one_client(index: int) -> None:
        async with http_client(shared_http.url, mode="legacy") as client:
            for call in range(per_client):
                note = f"c{index}-{call}"
                payload = {"name": "echo", "arguments": {"note": note}}
                result = await invoke(client, name="uppercase-note", payload=payload)
                assert result["payload"]["arguments"]["note"] == note.upper()
                answered.append(index)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            for index in range(clients):
                tg.start_soon(one_client, index)
    assert len(answered) == clients * per_client
    assert sorted(set(answered)) == list(range(clients))
