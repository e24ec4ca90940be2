"""`host()`, `scheme()`, `path()` and `in_domain()`: a URL read as the client that follows it.

The attack is a parser differential: a URL a rule reads as `example.com` and
an HTTP client sends to `evil.test`. Each case is a spelling a client
resolves to the host on the right.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli
from policy_engine.language.urls import in_domain, parse_url, url_host

HOSTS = [
    ("https://example.com/", "example.com"),
    ("https://evil.test/.example.com/x", "evil.test"),
    ("https://example.com@evil.test/", "evil.test"),
    ("https://user:pw@example.com:8443/x", "example.com"),
    ("https://evil.test\\.example.com/", "evil.test"),
    ("https://evil.test\\@example.com/", "evil.test"),
    ("https:evil.test/x", "evil.test"),
    ("https:///evil.test/x", "evil.test"),
    ("  https://ev\til.test/  ", "evil.test"),
    ("HTTPS://EXAMPLE.COM./", "example.com"),
    ("https://%65vil.test/", "evil.test"),
    ("https://evil.test#@example.com/", "evil.test"),
    ("https://evil.test?@example.com/", "evil.test"),
    ("https://bücher.example/", "xn--bcher-kva.example"),
    ("https://[::1]:80/", "[::1]"),
    ("example.com/x", ""),
    ("//example.com/x", ""),
    ("javascript:alert(1)", ""),
    ("https://exa mple.com/", ""),
    ("https://%zz.com/", ""),
]


@pytest.mark.parametrize(("url", "host"), HOSTS)
def test_host_is_the_one_a_client_connects_to(url: str, host: str) -> None:
    assert url_host(url) == host


def test_scheme_and_path_drop_case_query_and_fragment() -> None:
    parsed = parse_url("HTTPS://Example.com/a/b?c=1#d")
    assert parsed is not None
    assert (parsed.scheme, parsed.host, parsed.path) == ("https", "example.com", "/a/b")
    assert parse_url("https://example.com") == parse_url("https://example.com/")


@pytest.mark.parametrize(
    ("host", "domain", "inside"),
    [
        ("example.com", "example.com", True),
        ("api.example.com", "example.com", True),
        ("api.example.com.", ".Example.COM", True),
        ("notexample.com", "example.com", False),
        ("example.com.evil.test", "example.com", False),
        ("", "example.com", False),
        ("example.com", "", False),
    ],
)
def test_in_domain_goes_label_by_label(host: str, domain: str, inside: bool) -> None:
    assert in_domain(host, domain) is inside


GLOB = """\
validator fetch-guard {
  on tools/call request
  deny if $.arguments.url not like "https://*.example.com/*" "host not allowed"
}

test "the trap: another host fits the glob" {
  given tools/call request {"name": "fetch", "arguments": {"url": "https://evil.test/.example.com/x"}}
  expect allow
}
"""
SAFE = """\
validator fetch-guard {
  on tools/call request
  deny if scheme($.arguments.url) != "https" "https only"
  deny if not in_domain(host($.arguments.url), "example.com") "host not allowed"
}

test "the same URL is refused by host" {
  given tools/call request {"name": "fetch", "arguments": {"url": "https://evil.test/.example.com/x"}}
  expect deny
  expect message "host not allowed"
}

test "a subdomain is allowed" {
  given tools/call request {"name": "fetch", "arguments": {"url": "https://api.example.com/x"}}
  expect allow
}
"""


def test_check_warns_about_the_glob_and_the_host_form_closes_it(tmp_path: Path) -> None:
    glob = tmp_path / "glob.policy"
    glob.write_text(GLOB, encoding="utf-8")
    warned = CliRunner().invoke(cli, ["check", "--strict", str(glob)])
    assert warned.exit_code == 1
    assert "warning[W311]: glob `https://*.example.com/*` lets other hosts through" in (
        warned.output
    )
    assert CliRunner().invoke(cli, ["test", str(glob)]).exit_code == 0  # the hole is real
    safe = tmp_path / "safe.policy"
    safe.write_text(SAFE, encoding="utf-8")
    assert CliRunner().invoke(cli, ["check", "--strict", str(safe)]).exit_code == 0
    result = CliRunner().invoke(cli, ["test", str(safe)])
    assert result.exit_code == 0, result.output
