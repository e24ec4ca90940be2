"""Hot reload: a broken edit keeps the last good set, a good edit swaps it in.

A reload that would drop interceptors or leave none is refused unless
allowed, a change is read only once it has settled, and only ``.policy``
files in a watched folder are looked at.
"""

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

from policy_engine.compiler import compile_policies
from policy_engine.server import Reloader

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
TOOL_GUARD = (REPO / "policies" / "tool-guard.policy").read_text(encoding="utf-8")

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
    reloader = Reloader([specs], load_specs, settle=0, on_reload=events.append)
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


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "tool-guard.policy").write_text(TOOL_GUARD, encoding="utf-8")
    return folder


def _names(reloader: Reloader) -> list[str]:
    return [d.name for d in reloader.cell().descriptors()]


async def test_a_reload_that_empties_the_set_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    policy = folder / "tool-guard.policy"
    for allow_shrink in (False, True):
        policy.write_text(TOOL_GUARD, encoding="utf-8")
        reloader = Reloader([folder], compile_policies, settle=0, allow_shrink=allow_shrink)
        assert _names(reloader) == ["tool-guard", "admin-only-tools"]
        policy.write_text("", encoding="utf-8")  # emptied (or caught half-written)
        emptied = await reloader.check()
        assert emptied is not None and not emptied.ok
        assert "no interceptors" in emptied.message
        assert _names(reloader) == ["tool-guard", "admin-only-tools"]
        policy.unlink()  # the folder's only file deleted
        deleted = await reloader.check()
        assert deleted is not None and not deleted.ok
        assert _names(reloader) == ["tool-guard", "admin-only-tools"]


async def test_dropping_interceptors_needs_allow_shrink(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    policy = folder / "tool-guard.policy"
    only_first = TOOL_GUARD[: TOOL_GUARD.index("validator admin-only-tools")]
    guarded = Reloader([folder], compile_policies, settle=0)
    policy.write_text(only_first, encoding="utf-8")
    refused = await guarded.check()
    assert refused is not None and not refused.ok
    assert "drop 1 interceptor(s): admin-only-tools" in refused.message
    assert "--allow-shrink" in refused.message
    assert _names(guarded) == ["tool-guard", "admin-only-tools"]

    policy.write_text(TOOL_GUARD, encoding="utf-8")
    allowed = Reloader([folder], compile_policies, settle=0, allow_shrink=True)
    policy.write_text(only_first, encoding="utf-8")
    shrunk = await allowed.check()
    assert shrunk is not None and shrunk.ok
    assert _names(allowed) == ["tool-guard"]


async def test_other_files_in_the_folder_are_ignored(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    events: list[Any] = []
    reloader = Reloader([folder], compile_policies, settle=0, on_reload=events.append)
    log = folder / "decisions.jsonl"
    with anyio.fail_after(10):
        for index in range(5):
            with log.open("a") as handle:  # a decision log written inside the folder
                handle.write(json.dumps({"line": index}) + "\n")
            (folder / "data.bin").write_bytes(os.urandom(1024) * (index + 1))
            assert await reloader.check() is None
    assert events == []


async def test_a_change_is_read_only_once_it_has_settled(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    policy = folder / "tool-guard.policy"
    reloader = Reloader([folder], compile_policies, settle=0.3)
    with anyio.fail_after(10):
        policy.write_text(TOOL_GUARD[:40], encoding="utf-8")  # half written
        assert await reloader.check() is None
        policy.write_text(TOOL_GUARD + "\n# edited\n", encoding="utf-8")
        assert await reloader.check() is None  # still changing
        await anyio.sleep(0.35)
        settled = await reloader.check()
    assert settled is not None and settled.ok
    assert _names(reloader) == ["tool-guard", "admin-only-tools"]
