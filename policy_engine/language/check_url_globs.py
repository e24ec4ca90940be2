"""W311: a glob over URLs whose `*` or `?` sits before the end of the host.

`https://*.example.com/*` reads as "any subdomain", but `*` matches any run
of characters, `/` and `@` included: `https://evil.test/.example.com/x` fits
it, and so does `https://example.com*` with `https://example.com.evil.test`.
The warning shows such a URL and the form that reads the host instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import ast
from .diagnostics import Code, Diagnostic
from .globs import glob_matches
from .model import ResolvedInterceptor
from .urls import in_domain, url_host
from .walk import find

# What a wildcard in the host part may stand for, in the order tried.
_STAR_STANDS_FOR = ("evil.test/", ".evil.test/", "evil.test#", "@evil.test/")


def _authority_end(glob: str, start: int) -> int:
    slash = glob.find("/", start)
    return len(glob) if slash < 0 else slash


def _intended_domain(glob: str, start: int, end: int) -> str:
    """What the author meant the host to be: the authority without its wildcards."""
    authority = glob[start:end].rpartition("@")[2].partition(":")[0]
    return authority.replace("*", "").replace("?", "").strip(".")


def escaping_url(glob: str) -> tuple[str, str] | None:
    """A URL ``glob`` matches whose host is outside the domain it names, and that domain."""
    scheme_end = glob.find("://")
    if scheme_end < 0:
        return None
    start = scheme_end + 3
    end = _authority_end(glob, start)
    first = next((i for i, c in enumerate(glob[:end]) if c in "*?"), None)
    if first is None:
        return None
    domain = _intended_domain(glob, start, end)
    for stand_in in _stand_ins(glob, first, start):
        rest = glob[first + 1 :].replace("*", "x").replace("?", "x")
        head = glob[:first].replace("*", "x").replace("?", "x")
        candidate = head + stand_in + rest
        host = url_host(candidate)
        if glob_matches(glob, candidate) and (not domain or not in_domain(host, domain)):
            return candidate, domain
    return None


def _stand_ins(glob: str, first: int, start: int) -> tuple[str, ...]:
    """What to put for the first wildcard, the most telling first."""
    if glob[first] == "?":
        return ("/",) if first >= start else ()
    if first < start:  # in the scheme: a whole other URL fits before `://`
        return ("https://evil.test/?", *_STAR_STANDS_FOR)
    if glob[first - 1] not in "/.@":  # right after the host: a longer host fits
        return (".evil.test/", *_STAR_STANDS_FOR)
    return _STAR_STANDS_FOR


def _globs(node: ast.Like, interceptor: ResolvedInterceptor) -> tuple[str, ...]:
    if isinstance(node.globs, tuple):
        return node.globs
    param = interceptor.params.get(node.globs.name)
    if param is None or param.required:
        return ()
    default = param.default
    values = default if isinstance(default, list | tuple) else [default]
    return tuple(v for v in values if isinstance(v, str))


def lint_url_globs(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    for rule in interceptor.rules:
        for node in find(rule, ast.Like):
            for glob in _globs(node, interceptor):
                found = escaping_url(glob)
                if found is None:
                    continue
                example, domain = found
                safe = f'`in_domain(host(x), "{domain}")`' if domain else "`host(x) == ...`"
                yield Diagnostic(
                    Code.W311,
                    f"glob `{glob}` lets other hosts through: it matches `{example}`",
                    node.span,
                    f"`*` and `?` also match `/`, `@` and `.`; test the host itself: {safe}"
                    " and the scheme with `scheme(x)`",
                )
                break
