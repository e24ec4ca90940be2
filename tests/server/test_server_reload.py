"""Hot reload: a broken edit keeps the last good set, a good edit swaps it in."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from fixture_providers import FixtureProvider
from serve_fixture import load_specs
from server_harness import capability, http_client, http_server, list_interceptors

from policy_engine.server import Reloader

EXTENSION = "io.modelcontextprotocol/interceptors"
ONE = [{"name": "allow-all", "behavior": "allow-all"}]
TWO = [*ONE, {"name": "prompt-guard", "behavior": "deny-all", "events": ["prompts/get"]}]


def write_atomically(path: Path, text: str) -> None:
    staging = path.with_suffix(".tmp")
    staging.write_text(text)
    os.replace(staging, path)


async def test_reload_over_a_live_server(tmp_path: Path) -> None:
    specs = tmp_path / "specs.json"
    specs.write_text(json.dumps(ONE))
    with http_server("--specs", str(specs), "--watch") as server, anyio.fail_after(60):
        async with http_client(server.url) as client:
            assert [d["name"] for d in await list_interceptors(client)] == ["allow-all"]

            write_atomically(specs, '[{"name": "broken",')
            failed = server.next_line()
            assert failed.startswith("RELOAD failed")
            assert f"{specs}:1:" in failed
            assert [d["name"] for d in await list_interceptors(client)] == ["allow-all"]

            write_atomically(specs, json.dumps(TWO))
            assert server.next_line() == "RELOAD ok reloaded 2 interceptors"
            names = [d["name"] for d in await list_interceptors(client)]
            assert names == ["allow-all", "prompt-guard"]

        async with http_client(server.url) as fresh:
            assert capability(fresh)["extensions"][EXTENSION] == {
                "supportedEvents": ["tools/call", "prompts/get"]
            }


async def test_reloader_swaps_only_on_success(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    specs = tmp_path / "specs.json"
    specs.write_text(json.dumps(ONE))
    events: list[Any] = []
    reloader = Reloader([specs], load_specs, on_reload=events.append)
    first = reloader.cell()
    assert isinstance(first, FixtureProvider)

    assert await reloader.check() is None  # nothing changed, nothing loaded

    caplog.set_level(logging.INFO, logger="policy_engine.server.reload")
    specs.write_text("not json")
    failed = await reloader.check()
    assert failed is not None and not failed.ok
    assert reloader.cell() is first
    assert "still serving the last good policy set" in caplog.text
    assert f"{specs}:1:1: error:" in caplog.text

    specs.write_text(json.dumps(TWO))
    loaded = await reloader.check()
    assert loaded is not None and loaded.ok and loaded.interceptors == 2
    assert reloader.cell() is not first
    assert "reloaded 2 interceptors" in caplog.text
    assert [e.ok for e in events] == [False, True]

    specs.unlink()
    gone = await reloader.check()
    assert gone is not None and not gone.ok
    assert len(reloader.cell().descriptors()) == 2
