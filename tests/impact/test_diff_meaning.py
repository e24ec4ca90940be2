"""`policyc diff` sees every change in meaning, not only edited rules.

Each case is a pull request a reviewer could wave through on a "no change in
behaviour": it loosens a guard without editing a rule (a param default, a
named pattern, a list param), or by a change the fixed samples never reach
(a dropped regex anchor). The diff must call it a structural change and show
the loosening as "blocked before, allowed now".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

GUARD = """\
pattern API = /^https:\\/\\/api\\.example\\.com\\//

validator guard {{
  on tools/call request
  param cap: int = {cap}
  param hosts: list[string] = {hosts}
  deny if $.arguments.n > param.cap "too many" code cap
  deny if $.arguments.url not matches API "not the API" code url
  deny if $.arguments.host not in param.hosts "host not allowed" code host
  deny if $.arguments.slug not matches /{slug}/ "bad slug" code slug
}}

validator tokens {{
  on sampling/createMessage request
  deny if $.maxTokens > {tokens} "over the token cap" code token-cap
}}
"""
BASE = {
    "cap": "10",
    "hosts": '["api.example.com"]',
    "slug": "^[a-z]+$",
    "tokens": "4096",
}


def write(root: Path, name: str, text: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "p.policy").write_text(text, encoding="utf-8")
    return folder


def diff(old: Path, new: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        cli, ["diff", str(old), str(new), "--budget", "300", "--format", "json", *extra]
    )
    return result.exit_code, json.loads(result.output)


def loosened(report: dict[str, Any]) -> set[tuple[str, str]]:
    groups = report["groups"]
    return {(g["interceptor"], g["rule"]) for g in groups if g["kind"] == "blocked-to-allowed"}


def pull_request(tmp_path: Path, **change: str) -> tuple[Path, Path]:
    old = write(tmp_path, "old", GUARD.format(**BASE))
    new = write(tmp_path, "new", GUARD.format(**{**BASE, **change}))
    return old, new


@pytest.mark.parametrize(
    ("change", "structural", "rule"),
    [
        ({"cap": "1000"}, "param changed", ("guard", "cap")),
        ({"hosts": '["api.example.com", "evil.test"]'}, "param changed", ("guard", "host")),
        ({"slug": "^[a-z]+"}, "rule changed", ("guard", "slug")),
        ({"tokens": "8192"}, "rule changed", ("tokens", "token-cap")),
    ],
    ids=["param-default-raised", "host-added-to-list-param", "regex-anchor-dropped", "token-cap"],
)
def test_a_loosening_pull_request_is_a_change_and_is_called_a_loosening(
    tmp_path: Path, change: dict[str, str], structural: str, rule: tuple[str, str]
) -> None:
    old, new = pull_request(tmp_path, **change)
    code, report = diff(old, new)
    assert code == 1
    assert [item["change"] for item in report["structural"]] == [structural]
    assert loosened(report) == {rule}
    group = next(g for g in report["groups"] if (g["interceptor"], g["rule"]) == rule)
    assert group["title"] == "blocked before, allowed now"
    assert all(e["before"]["decision"] == "deny" for e in group["examples"])


def test_a_widened_named_pattern_is_a_change_with_a_string_only_the_new_one_accepts(
    tmp_path: Path,
) -> None:
    old = write(tmp_path, "old", GUARD.format(**BASE))
    new = write(tmp_path, "new", GUARD.format(**BASE).replace("api\\.example\\.com\\/", ""))
    assert "pattern API = /^https:\\/\\//" in (new / "p.policy").read_text()
    code, report = diff(old, new, "--show-values")
    assert code == 1
    [item] = report["structural"]
    assert item["change"] == "pattern changed" and "`API`" in item["what"] and item["risk"]
    assert loosened(report) == {("guard", "url")}
    [group] = report["groups"]
    url = group["examples"][0]["payload"]["arguments"]["url"]
    assert url.startswith("https://") and not url.startswith("https://api.example.com/")


def test_text_output_labels_a_loosening_hidden_behind_another_rule(tmp_path: Path) -> None:
    old, new = pull_request(tmp_path, cap="1000")
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--budget", "300"])
    assert result.exit_code == 1
    assert "param changed: `guard` param cap: int = 10 -> param cap: int = 1000" in result.output
    assert "blocked before, allowed now: guard / cap" in result.output
    assert "different messages" not in result.output
    assert "no change in behaviour" not in result.output


def test_descriptor_fields_are_structural_changes(tmp_path: Path) -> None:
    text = "mutator m {\n  on tools/call request\n  priority 1\n  remove $.arguments.x\n}\n"
    old = write(tmp_path, "old", text)
    new = write(tmp_path, "new", text.replace("priority 1", 'priority 5\n  version "2.0.0"'))
    code, report = diff(old, new)
    assert code == 1
    assert [item["what"] for item in report["structural"]] == [
        "`m` priorityHint 1 -> 5",
        '`m` version null -> "2.0.0"',
    ]


LOCKED = """\
validator lockdown {
  on tools/call request
  deny if $.arguments.n < 100 "locked" code locked
}

validator guard {
  on tools/call request
  param cap: int = 10
  deny if CONDITION "too many" code cap
}

test "a team with a lower cap" {
  given tools/call request {"name": "export", "arguments": {"n": 7}}
  only guard
  config guard {"cap": 5}
  expect deny
}
"""


def test_test_blocks_run_as_written_with_their_only_and_config(tmp_path: Path) -> None:
    """Only the test's config (cap 5) reaches n = 7; only its `only` keeps `lockdown` out."""
    old = write(tmp_path, "old", LOCKED.replace("CONDITION", "$.arguments.n > param.cap"))
    tighter = "$.arguments.n > param.cap and $.arguments.n > 8"
    new = write(tmp_path, "new", LOCKED.replace("CONDITION", tighter))
    code, report = diff(old, new)
    assert code == 1
    [group] = report["groups"]
    assert (group["kind"], group["rule"]) == ("blocked-to-allowed", "cap")
    [example] = group["examples"]
    assert example["origin"].startswith("test (old)")
    assert example["only"] == ["guard"] and example["config"] == {"guard": {"cap": 5}}
    assert example["after"]["decision"] == "allow"


def test_a_set_diffed_with_itself_stays_silent(tmp_path: Path) -> None:
    old, new = pull_request(tmp_path)
    code, report = diff(old, new)
    assert (code, report["structural"], report["groups"]) == (0, [], [])
