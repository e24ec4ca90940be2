"""The federation rules on their own: the collision naming rule and URI ownership."""

from __future__ import annotations

from policy_engine.gateway.federation import (
    Routes,
    merge_cache_hints,
    merge_handshakes,
    merge_named,
    merge_uris,
)


def test_colliding_names_are_prefixed_for_every_owner() -> None:
    routes = Routes()
    merged = merge_named(
        "tools/list",
        [
            ("a", {"tools": [{"name": "echo", "x": 1}, {"name": "only_a"}]}),
            ("b", {"tools": [{"name": "echo", "x": 2}, {"name": "only_b"}]}),
        ],
        routes,
    )
    assert [t["name"] for t in merged["tools"]] == ["a__echo", "only_a", "b__echo", "only_b"]
    assert merged["tools"][2]["x"] == 2
    assert routes.tools == {
        "a__echo": ("a", "echo"),
        "only_a": ("a", "only_a"),
        "b__echo": ("b", "echo"),
        "only_b": ("b", "only_b"),
    }


def test_adding_a_backend_never_renames_unique_names() -> None:
    one = merge_named("prompts/list", [("a", {"prompts": [{"name": "p"}]})], Routes())
    two = merge_named(
        "prompts/list",
        [("a", {"prompts": [{"name": "p"}]}), ("c", {"prompts": [{"name": "q"}]})],
        Routes(),
    )
    assert one["prompts"][0]["name"] == two["prompts"][0]["name"] == "p"


def test_a_merged_2026_list_caches_as_strictly_as_its_strictest_part() -> None:
    public = {"resultType": "complete", "cacheScope": "public", "ttlMs": 60_000}
    private = {"resultType": "complete", "cacheScope": "private", "ttlMs": 5_000}
    assert merge_cache_hints([public, private]) == private
    assert merge_cache_hints([public, public]) == public
    assert merge_cache_hints([public, {"resultType": "complete"}]) == {
        "resultType": "complete",
        "cacheScope": "private",
        "ttlMs": 0,
    }
    assert merge_cache_hints([{}, {}]) == {}  # 2025 lists carry none


def test_first_backend_owns_a_uri() -> None:
    routes = Routes()
    merged = merge_uris(
        "resources/list",
        [
            ("a", {"resources": [{"uri": "x://1"}]}),
            ("b", {"resources": [{"uri": "x://1"}, {"uri": "x://2"}]}),
        ],
        routes,
    )
    assert [r["uri"] for r in merged["resources"]] == ["x://1", "x://2"]
    assert routes.resources == {"x://1": "a", "x://2": "b"}


def test_handshakes_merge_capabilities_and_label_instructions() -> None:
    merged = merge_handshakes(
        {
            "a": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "a", "version": "1"},
                "instructions": "use a",
            },
            "b": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": True}, "prompts": {}},
                "serverInfo": {"name": "b", "version": "1"},
            },
        }
    )
    assert merged["capabilities"] == {"tools": {"listChanged": True}, "prompts": {}}
    assert merged["serverInfo"]["name"] == "policyc-gateway"
    assert merged["instructions"] == "[a] use a"
    assert merged["protocolVersion"] == "2025-11-25"
