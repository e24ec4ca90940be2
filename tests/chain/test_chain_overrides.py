"""Invoker overrides: narrowing only, selectors by name or by host, config files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policy_engine.chain import (
    ChainConfigError,
    ChainEntry,
    Host,
    InterceptorChain,
    ServerSpec,
    build_entries,
    load_chain_config,
)
from policy_engine.wire import ChainExecutionParams, Hook, InterceptorOverrides

from .providers import ScriptedProvider, append, deny, mutator, validator


def hooks(*pairs: tuple[list[str], str]) -> list[Hook]:
    return [Hook(events=events, phase=phase) for events, phase in pairs]  # type: ignore[arg-type]


def entry_with(declared: list[dict[str, Any]], override: list[Hook]) -> ChainEntry:
    provider = ScriptedProvider("host-a", validator("guard", hooks=declared))
    (descriptor,) = provider.descriptors()
    return ChainEntry(descriptor, Host("host-a", provider), InterceptorOverrides(hooks=override))


DECLARED = [
    {"events": ["tools/call", "resources/*"], "phase": "request"},
    {"events": ["*"], "phase": "response"},
]


@pytest.mark.parametrize(
    "override",
    [
        hooks((["tools/call"], "request")),
        hooks((["resources/read"], "request")),
        hooks((["resources/*"], "request")),
        hooks((["prompts/get", "*"], "response")),
        hooks((["tools/call"], "request"), (["tools/*"], "response")),
    ],
)
def test_narrowing_hooks_is_accepted(override: list[Hook]) -> None:
    assert entry_with(DECLARED, override).hooks == override


@pytest.mark.parametrize(
    ("override", "event", "phase"),
    [
        (hooks((["tools/list"], "request")), "tools/list", "request"),
        (hooks((["tools/*"], "request")), "tools/*", "request"),
        (hooks((["*"], "request")), "*", "request"),
        (hooks((["tools/call"], "request"), (["x/y", "tools/call"], "request")), "x/y", "request"),
    ],
)
def test_widening_hooks_is_rejected_naming_the_event(
    override: list[Hook], event: str, phase: str
) -> None:
    with pytest.raises(ChainConfigError) as caught:
        entry_with(DECLARED, override)
    assert caught.value.message == (
        f"override for `guard` on `host-a` widens its hooks: "
        f"event `{event}` at phase `{phase}` is not declared"
    )


def test_moving_an_event_to_an_undeclared_phase_is_widening() -> None:
    declared = [{"events": ["tools/call"], "phase": "request"}]
    with pytest.raises(ChainConfigError, match="event `tools/call` at phase `response`"):
        entry_with(declared, hooks((["tools/call"], "response")))


async def test_narrowed_hooks_decide_what_fires() -> None:
    entry = entry_with(DECLARED, hooks((["resources/read"], "request")))
    chain = InterceptorChain([entry])
    for event, ran in [("resources/read", 1), ("tools/call", 0), ("resources/list", 0)]:
        params = ChainExecutionParams(event=event, phase="request", payload={})
        assert len((await chain.execute(params, side="sending")).results) == ran


def discovered(*providers: ScriptedProvider) -> list[Any]:
    return [(Host(p.host, p), p.descriptors()) for p in providers]


def test_host_qualified_settings_win_field_by_field_over_name_settings() -> None:
    a = ScriptedProvider("a", mutator("redact", append("a")))
    b = ScriptedProvider("b", mutator("redact", append("b")))
    built = build_entries(
        discovered(a, b),
        overrides={
            "redact": InterceptorOverrides(fail_open=True, timeout_ms=100),
            ("b", "redact"): InterceptorOverrides(timeout_ms=5),
        },
        configs={"redact": {"level": 1, "keep": True}, ("a", "redact"): {"level": 2}},
    )
    on_a, on_b = built
    assert (on_a.fail_open, on_a.timeout_ms(None)) == (True, 100)
    assert (on_b.fail_open, on_b.timeout_ms(None)) == (True, 5)
    assert on_a.config == {"level": 2, "keep": True}
    assert on_b.config == {"level": 1, "keep": True}


@pytest.mark.parametrize(
    ("selector", "message", "help_text"),
    [
        ("redcat", "settings for unknown interceptor `redcat`", "did you mean `redact`?"),
        (("c", "redact"), "settings for `redact` on unknown server `c`", "known: `a`"),
        (("a", "nope"), "server `a` serves no interceptor `nope`", "known: `redact`"),
    ],
)
def test_settings_that_match_nothing_are_errors(
    selector: Any, message: str, help_text: str
) -> None:
    a = ScriptedProvider("a", mutator("redact", append("a")))
    with pytest.raises(ChainConfigError) as caught:
        build_entries(discovered(a), overrides={selector: InterceptorOverrides(fail_open=True)})
    assert caught.value.message == message
    assert caught.value.help == help_text


def write(tmp_path: Path, body: Any) -> Path:
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(body) if not isinstance(body, str) else body)
    return path


def test_config_file_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCAN_TOKEN", "s3cret")
    path = write(
        tmp_path,
        {
            "defaultTimeoutMs": 2000,
            "discoveryTimeoutMs": 5000,
            "servers": [
                {"id": "guard", "command": "python guard.py --strict", "env": {"A": "1"}},
                {"command": ["node", "x.js"], "cwd": "sub"},
                {
                    "id": "scan",
                    "url": "https://scan.example/mcp",
                    "bearerTokenEnv": "SCAN_TOKEN",
                    "interceptors": {"pii": {"failOpen": True, "config": {"level": "high"}}},
                },
            ],
            "interceptors": {
                "pii": {
                    "priorityHint": {"request": -2000},
                    "mode": "enforce",
                    "timeoutMs": 300,
                    "hooks": [{"events": ["tools/call"], "phase": "request"}],
                }
            },
        },
    )
    config = load_chain_config(path)

    guard, node, scan = config.servers
    assert guard == ServerSpec(
        command=("python", "guard.py", "--strict"), id="guard", env={"A": "1"}, cwd=str(tmp_path)
    )
    assert node.id == "node x.js" and node.cwd == str(tmp_path / "sub")
    assert scan.url == "https://scan.example/mcp" and scan.bearer_token == "s3cret"
    assert "s3cret" not in repr(scan)
    assert config.default_timeout_ms == 2000 and config.discovery_timeout_ms == 5000
    assert config.overrides["pii"].to_wire() == {
        "priorityHint": {"request": -2000},
        "mode": "active",
        "timeoutMs": 300,
        "hooks": [{"events": ["tools/call"], "phase": "request"}],
    }
    assert config.overrides[("scan", "pii")].to_wire() == {"failOpen": True}
    assert config.configs == {("scan", "pii"): {"level": "high"}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "chain.json:1:2: chain config is not valid JSON"),
        ({"servers": [{"command": "x", "url": "http://h/mcp"}]}, "exactly one of"),
        ({"servers": [{}]}, "exactly one of"),
        ({"servers": [{"url": "ftp://h/mcp"}]}, "must be http or https"),
        ({"servers": [{"command": "x", "bearerToken": "t"}]}, "only applies to a server"),
        ({"servers": [{"url": "http://h/mcp", "bearerTokenEnv": "NOPE_UNSET"}]}, "NOPE_UNSET"),
        ({"servers": [{"id": "s", "command": "a"}, {"id": "s", "url": "http://h"}]}, "`s`"),
        ({"interceptors": {"x": {"failopen": True}}}, "`interceptors.x.failopen`"),
        ({"interceptors": {"x": {"timeoutMs": 0}}}, "`interceptors.x.timeoutMs`"),
        ({"defaultTimeout": 5}, "`defaultTimeout`"),
    ],
)
def test_config_file_errors_say_where(tmp_path: Path, body: Any, message: str) -> None:
    with pytest.raises(ChainConfigError) as caught:
        load_chain_config(write(tmp_path, body))
    assert message in str(caught.value)


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ChainConfigError, match="cannot read chain config"):
        load_chain_config(tmp_path / "absent.json")


async def test_connect_applies_file_settings_under_api_settings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "defaultTimeoutMs": 700,
            "interceptors": {"deny": {"mode": "audit", "failOpen": True}},
        },
    )
    provider = ScriptedProvider("p", validator("deny", deny()))
    async with InterceptorChain.connect(
        local={"policies": provider},
        config=load_chain_config(path),
        overrides={"deny": InterceptorOverrides(fail_open=False)},
    ) as chain:
        (entry,) = chain.entries
        assert entry.host.id == "policies"
        assert (entry.mode, entry.fail_open, chain.default_timeout_ms) == ("audit", False, 700)
        params = ChainExecutionParams(event="tools/call", phase="request", payload={})
        assert (await chain.execute(params, side="sending")).status == "success"


async def test_connect_refuses_duplicate_host_ids() -> None:
    provider = ScriptedProvider("p", validator("v"))
    with pytest.raises(ChainConfigError, match="two hosts share the id `x`"):
        async with InterceptorChain.connect(
            local={"x": provider}, servers=[ServerSpec.parse("python -V", id="x")]
        ):
            pass


def test_server_spec_parse() -> None:
    assert ServerSpec.parse("http://127.0.0.1:9/mcp").url == "http://127.0.0.1:9/mcp"
    spec = ServerSpec.parse("python 'my server.py' -v")
    assert spec.command == ("python", "my server.py", "-v")
    assert spec.id == "python 'my server.py' -v"
    assert ServerSpec.parse(["a", "b"], id="named").id == "named"
