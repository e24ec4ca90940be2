"""The generated MCP payload schemas: in sync with mcp_types, complete, and SDK-free to load."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from importlib.metadata import version
from pathlib import Path

from policy_engine.wire.events import STANDARD_EVENTS

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "scripts" / "gen_mcp_schemas.py"


def _committed_bytes() -> bytes:
    data = resources.files("policy_engine.language").joinpath("data/mcp_payloads.json")
    return data.read_bytes()


def test_generated_file_is_in_sync_with_installed_mcp_types(tmp_path: Path) -> None:
    fresh = tmp_path / "mcp_payloads.json"
    subprocess.run(
        [sys.executable, str(GENERATOR), "--output", str(fresh)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    assert fresh.read_bytes() == _committed_bytes(), (
        "policy_engine/language/data/mcp_payloads.json is stale: "
        "run `python scripts/gen_mcp_schemas.py` and commit the result"
    )


def test_file_covers_every_standard_event_and_records_its_source() -> None:
    data = json.loads(_committed_bytes())
    mcp_types_version = version("mcp-types")
    assert data["mcp_types_version"] == mcp_types_version
    assert sorted(data["events"]) == sorted(STANDARD_EVENTS)
    for event, entry in data["events"].items():
        assert sorted(entry) == ["request", "response"], event
        for phase, payload in entry.items():
            expected = "policyc" if event == "llm/completion" else f"mcp_types {mcp_types_version}"
            assert payload["source"] == expected, (event, phase)
            assert isinstance(payload["schema"], dict), (event, phase)


def test_models_follow_the_sdk_method_table() -> None:
    events = json.loads(_committed_bytes())["events"]
    models = {(e, p): events[e][p]["models"] for e in events for p in ("request", "response")}
    assert models[("tools/call", "request")] == ["CallToolRequestParams"]
    assert models[("tools/call", "response")] == ["CallToolResult", "InputRequiredResult"]
    assert models[("sampling/createMessage", "response")] == [
        "CreateMessageResult",
        "CreateMessageResultWithTools",
    ]
    assert models[("elicitation/create", "request")] == [
        "ElicitRequestURLParams",
        "ElicitRequestFormParams",
    ]
    assert models[("roots/list", "response")] == ["ListRootsResult"]
    assert models[("resources/subscribe", "response")] == ["EmptyResult"]


def test_titles_and_defaults_are_stripped_descriptions_kept_for_hovers() -> None:
    data = json.loads(_committed_bytes())

    def keywords(node: object) -> set[str]:
        if isinstance(node, list):
            return set().union(*(keywords(item) for item in node))
        if not isinstance(node, dict):
            return set()
        found = set(node)
        for key, value in node.items():
            if key == "properties":
                found |= set().union(*(keywords(sub) for sub in value.values()))
            elif key != "$defs":
                found |= keywords(value)
        return found

    used = keywords(data["$defs"]) | keywords(list(data["events"].values()))
    assert not used & {"title", "default"}
    # `title` and `description` survive where they are MCP field names.
    assert {"description", "title"} <= set(data["$defs"]["Tool"]["properties"])
    # Field docstrings of mcp_types become descriptions, first paragraph only.
    is_error = data["$defs"]["CallToolResult"]["properties"]["isError"]
    assert is_error["description"] == "Whether the tool call ended in an error."
    assert all("\n" not in d for d in _descriptions(data))


def _descriptions(node: object) -> list[str]:
    if isinstance(node, list):
        return [d for item in node for d in _descriptions(item)]
    if not isinstance(node, dict):
        return []
    found = [node["description"]] if isinstance(node.get("description"), str) else []
    return found + [d for value in node.values() for d in _descriptions(value)]


def test_importing_and_checking_does_not_load_the_sdk_or_pydantic() -> None:
    code = (
        "import json, sys\n"
        "from policy_engine.language.path_syntax import Field, PathSyntax\n"
        "from policy_engine.language import payload_schema as ps\n"
        "path = PathSyntax('$.params.name', (Field(('params',)), Field(('name',))))\n"
        "assert ps.check_path('tools/call', 'request', path) is not None\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    )
    loaded = {name.partition(".")[0] for name in json.loads(result.stdout)}
    assert "policy_engine" in loaded
    assert not loaded & {"mcp", "mcp_types", "pydantic", "pydantic_core"}
