"""The payload probe: a regex it rules out matches no string of the payload, and
rules answered through it decide exactly as rules that scan their strings."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import re2
from hypothesis import example, given, settings
from hypothesis import strategies as st

from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.compiler import mutators as mutators_module
from policy_engine.compiler.conditions import normalize_text, url_decode
from policy_engine.compiler.json_size import encoded
from policy_engine.compiler.matchers import context_free, line_mode
from policy_engine.compiler.payload_probe import PayloadProbe, ProbeRegexes, member_key
from policy_engine.language.re2_config import re2_options
from policy_engine.wire import MutationResult, ValidationResult

# Pieces that JSON escapes (quote, backslash, control), that line mode and
# word boundaries care about, that percent-decoding and NFKC change.
PIECES = ["a", "b", "1", " ", "_", "-", ".", '"', "\\", "\n", "\t", "\x01", "%2e", "%41"]
PIECES += ["é", "\uff21", "\u200b", ":", "A"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)
PAYLOADS = st.recursive(
    TEXT | st.integers(-5, 5) | st.booleans() | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)
REGEXES = [
    "a",
    "^a",
    "a$",
    "^a$",
    r"\ba\b",
    r"\Ba",
    "(?i)A1",
    "[^a]b",
    "b[^a]",
    r"a\s+b",
    "^$",
    r"\.\.",
    "é",
    "A",
    "(?m)^b",
    "[.]",
    r"\d{2}",
]


def strings_of(value: Any) -> list[str]:
    """Every string of a payload, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings_of(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *strings_of(item)]]
    return []


REGISTRY = ProbeRegexes()
INDEX = {regex: REGISTRY.add(re2.compile(line_mode(regex), re2_options())) for regex in REGEXES}
REGISTRY.seal()


def probe(payload: Any) -> PayloadProbe:
    return PayloadProbe(payload, REGISTRY)


@settings(max_examples=400, deadline=None)
@given(PAYLOADS, st.sampled_from(REGEXES), st.sampled_from([(), ("url_decode",), ("normalize",)]))
def test_a_regex_ruled_out_matches_no_string(
    payload: Any, regex: str, through: tuple[str, ...]
) -> None:
    assert context_free(regex)
    if not probe(payload).rules_out(INDEX[regex], through):
        return
    mapped = {(): lambda s: s, ("url_decode",): url_decode, ("normalize",): normalize_text}
    pattern = re2.compile(regex, re2_options())
    for text in strings_of(payload):
        assert pattern.search(mapped[through](text)) is None, (text, regex)


def test_what_cannot_be_probed_is_never_ruled_out() -> None:
    nowhere = INDEX["A"]
    # A backslash in the text (a quote, backslash or control character in a string).
    for payload in ({"a": 'say "zzz"'}, {"a": "x\\y"}, {"a": "x\ny"}):
        assert probe(payload).rules_out(nowhere) is False
    # orjson refuses a lone surrogate and integers past 64 bits.
    assert probe({"a": "\ud800"}).rules_out(nowhere) is False
    assert probe({"a": 1 << 70}).rules_out(nowhere) is False
    # A function that would change some string is not looked through.
    assert probe({"a": "%7a"}).rules_out(nowhere, ("url_decode",)) is False
    assert probe({"a": "é"}).rules_out(nowhere, ("normalize",)) is False
    assert probe({"a": "plain"}).rules_out(nowhere, ("url_decode", "normalize"))


def test_a_set_that_answers_nothing_is_checked_regex_by_regex() -> None:
    """An RE2 Set out of DFA memory reports no match at all: that must not rule out."""

    class Silent:
        def Match(self, text: bytes) -> list[int]:
            return []

    registry = ProbeRegexes()
    found = registry.add(re2.compile(line_mode("b"), re2_options()))
    absent = registry.add(re2.compile(line_mode("zzz"), re2_options()))
    registry.seal()
    registry._chunks = [(start, end, Silent(), union) for start, end, _, union in registry._chunks]
    payload = {"a": "abc"}
    assert PayloadProbe(payload, registry).rules_out(found) is False
    assert PayloadProbe(payload, registry).rules_out(absent) is True
    assert PayloadProbe({"a": "x"}, registry).rules_out(found) is True


POLICY = """
validator guard "Matches of every kind" {
  on tools/call request
  deny if any $.arguments..* matches /(?i)\\bdrop\\s+table\\b/ "sql in {path}" code sql
  deny if any $.arguments..* matches /;\\s*rm\\b/ "shell in {path}" code shell
  deny if any url_decode($.arguments..*) matches /\\.\\.\\// "traversal in {path}" code dots
  deny if any normalize($..note) matches /^ab/ "starts ab" code ab
  deny if any keys($.arguments) matches /^secret_/ "secret key" code key
  warn if not $.arguments..* matches /ok/ "no ok" code no-ok
  deny if all $.arguments.tags[*] matches /^t/ "all tags" code tags
  deny if any $..path == "[P]" "path set" code path-set
  deny if any $..list == "abx" "list set" code list-set
}

mutator scrub "Pattern rewrites" {
  on tools/call request
  redact $.arguments matching /\\b[0-9]{3}-[0-9]{4}\\b/ with "[NUM]"
  redact $..note matching /ab+/, /(?i)drop/
  redact $..note matching /a$/ with "[END]"
  mask $.arguments matching /é+/ keep 1
  mask $..path keep 3
  set $.arguments.path = "abx" if $.arguments.n == "ok"
  redact $..path with "[P]" if $.arguments.n == "ok"
  mask $..list keep 3
  set $.arguments.list = "abx" if $.arguments.n == "ok"
}
"""

WORDS = st.sampled_from(
    [
        *("drop table x", "; rm -rf", "..%2f", "../", "ab", "abb", "a", "555-0134", "ok"),
        *("é", "t1", "plain", 'q"uote', "tab\there", "x\ny"),
    ]
)
ARGUMENTS = st.dictionaries(
    st.sampled_from(["note", "secret_id", "path", "n", "list"]),
    WORDS | st.lists(WORDS, max_size=3) | st.dictionaries(st.just("note"), WORDS, max_size=1),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(ARGUMENTS, st.lists(WORDS, max_size=2))
# A member the input lacks, added by `set` and then read: the probe of the
# changed payload must not take the input's "no such member".
@example({"n": "ok"}, [])
@example({"n": "ok", "note": "ab"}, ["t1"])
def test_rules_decide_the_same_with_and_without_the_probe(
    arguments: dict[str, Any], tags: list[str]
) -> None:
    payload = {"name": "t", "arguments": {**arguments, "tags": tags}}

    def decide(policy: PolicySet) -> list[dict[str, Any]]:
        """Each interceptor on its own, then the guard on the scrubbed payload, as in
        a chain (the probe of a mutator's output takes what it can of the input's)."""
        alone = [
            policy.invoke_sync(name, "tools/call", "request", copy.deepcopy(payload))
            for name in ("guard", "scrub")
        ]
        scrubbed = policy.invoke_sync("scrub", "tools/call", "request", copy.deepcopy(payload))
        after = policy.invoke_sync("guard", "tools/call", "request", scrubbed.payload)  # type: ignore[union-attr]
        return [r.model_dump(exclude={"duration_ms"}) for r in (*alone, after)]

    probed = decide(compile_sources({"p.policy": POLICY}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PayloadProbe, "rules_out", lambda *args: False)
        patch.setattr(PayloadProbe, "lacks_members", lambda *args: False)
        scanned = decide(compile_sources({"p.policy": POLICY}))
    assert probed == scanned


def test_a_clean_message_never_walks_the_paths_it_rules_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = compile_sources({"p.policy": POLICY})
    walked: list[object] = []
    original = mutators_module.StringIndex

    def counting(value: Any) -> Any:
        walked.append(value)
        return original(value)

    monkeypatch.setattr(mutators_module, "StringIndex", counting)
    clean = {"name": "t", "arguments": {"note": "hello", "n": ["x", "y"]}}
    scrubbed = policy.invoke_sync("scrub", "tools/call", "request", clean)
    assert isinstance(scrubbed, MutationResult)
    assert not scrubbed.modified and walked == []
    dirty = {"name": "t", "arguments": {"note": "call 555-0134"}}
    scrubbed = policy.invoke_sync("scrub", "tools/call", "request", dirty)
    assert isinstance(scrubbed, MutationResult)
    assert scrubbed.modified and walked
    assert scrubbed.payload["arguments"]["note"] == "call [NUM]"


GUARDS = """
validator guard "Positive matches only" {
  on tools/call request
  deny if any $.arguments..* matches /(?i)\\bdrop\\s+table\\b/ "sql in {path}" code sql
  deny if any $.arguments..* matches /;\\s*rm\\b/ "shell in {path}" code shell
  deny if any url_decode(url_decode($.arguments..*)) matches /\\.\\.\\// "dots in {path}" code dots
  deny if any $.arguments..* matches /\\[\\[|\\]\\]|\\{\\{/ "brackets in {path}" code brackets
}
"""


@pytest.mark.parametrize(
    ("note", "walks", "valid"),
    [
        ("hello", 0, True),
        ("see ../etc", 1, False),
        ("x%2e%2e/", 1, False),
        ("a;rm -rf", 1, False),
        # The probe reads the payload's own encoding: brackets around it (the
        # bounds check's, see nesting.py) would make this rule walk every message.
        ("a [[b", 1, False),
    ],
)
def test_a_clean_request_finds_no_path_of_a_rule_it_rules_out(
    monkeypatch: pytest.MonkeyPatch, note: str, walks: int, valid: bool
) -> None:
    from policy_engine.compiler import conditions, match_groups

    policy = compile_sources({"g.policy": GUARDS})
    found: list[object] = []
    for module in (conditions, match_groups):
        original = module.find_memoised

        def counting(path: Any, payload: Any, memo: Any, original: Any = original) -> Any:
            found.append(path)
            return original(path, payload, memo)

        monkeypatch.setattr(module, "find_memoised", counting)
    result = policy.invoke_sync("guard", "tools/call", "request", {"arguments": {"note": note}})
    assert isinstance(result, ValidationResult)
    assert result.valid is valid
    assert len(set(map(id, found))) == walks


def keys_of(value: Any) -> set[str]:
    if isinstance(value, list):
        return {key for item in value for key in keys_of(item)}
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in keys_of(item)}
    return set()


@settings(max_examples=300, deadline=None)
@given(PAYLOADS, TEXT)
def test_a_member_the_probe_says_is_missing_is_in_no_object(payload: Any, name: str) -> None:
    lacks = probe(payload).lacks_members((member_key(name),))
    if encoded(payload) is None:
        assert lacks is False
    elif lacks:
        assert name not in keys_of(payload)
    else:  # the converse holds too when the name is a key
        assert name in keys_of(payload) or member_key(name) in (encoded(payload) or b"")


def test_a_descendant_rule_without_its_member_never_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    from policy_engine.compiler import jsonpath

    source = """
    mutator m "Descendant rules" {
      on tools/call request
      redact $..email with "[EMAIL]"
      redact $..ssn with "[SSN]"
      redact $..text matching /secret/
      remove $..token
    }
    validator v "Descendant operand" {
      on tools/call request
      deny if any $..text == "x" "text x" code x
    }
    """
    policy = compile_sources({"m.policy": source})
    walks: list[object] = []
    for name in ("descendant_fields", "_walk_fields"):
        original = getattr(jsonpath, name)

        def counting(*args: Any, original: Any = original) -> Any:
            walks.append(args)
            return original(*args)

        monkeypatch.setattr(jsonpath, name, counting)
    payload = {"name": "t", "arguments": {"records": [{"id": 1, "note": "text and email"}]}}
    assert not policy.invoke_sync("m", "tools/call", "request", payload).modified  # type: ignore[union-attr]
    assert policy.invoke_sync("v", "tools/call", "request", payload).valid  # type: ignore[union-attr]
    assert walks == []
    payload = copy.deepcopy(payload)  # a payload changed in place is a new payload
    payload["arguments"]["records"][0]["email"] = "a@b.c"
    payload["arguments"]["records"][0]["text"] = "x"
    result = policy.invoke_sync("m", "tools/call", "request", payload)
    assert result.payload["arguments"]["records"][0]["email"] == "[EMAIL]"  # type: ignore[union-attr]
    assert not policy.invoke_sync("v", "tools/call", "request", payload).valid  # type: ignore[union-attr]
    assert walks


def test_past_the_registry_s_size_rules_do_not_probe_and_still_decide() -> None:
    from policy_engine.compiler.payload_probe import MAX_PROBE_REGEXES

    count = MAX_PROBE_REGEXES + 6
    rules = "\n".join(
        f'  deny if $.arguments.f{k} matches /word{k}x/ "w{k}" code w{k}' for k in range(count)
    )
    policy = compile_sources(
        {"m.policy": f'validator many "Many" {{\n  on tools/call request\n{rules}\n}}\n'}
    )
    assert len(policy._probes._compiled) == MAX_PROBE_REGEXES
    for k in (0, MAX_PROBE_REGEXES - 1, MAX_PROBE_REGEXES, count - 1):
        arguments = {f"f{k}": f"word{k}x", "other": f"word{k}x"}
        result = policy.invoke_sync("many", "tools/call", "request", {"arguments": arguments})
        assert isinstance(result, ValidationResult)
        assert not result.valid and result.messages is not None
        assert [m.message for m in result.messages] == [f"w{k}"]
    clean = policy.invoke_sync("many", "tools/call", "request", {"arguments": {"a": "none"}})
    assert isinstance(clean, ValidationResult) and clean.valid
