"""URLs taken apart the way a browser or an HTTP client does, for `host()`, `scheme()`, `path()`.

A glob such as `https://*.example.com/*` is a string pattern, and `*` also
matches `/`: `https://evil.test/.example.com/x` fits it. Rules that mean
"this host" must read the host, and read it as the client that follows the
URL will: the WHATWG URL standard's rules for special schemes (`\\` is `/`,
any number of slashes after `https:`, tabs and newlines dropped, userinfo
before the last `@` is not the host, percent-escapes in the host decoded,
the host lower-cased, a trailing dot dropped, international names in their
ASCII form). Text that is not a URL, or whose host cannot be read, has the
empty host, so an allow list written with `host()` refuses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_DROPPED = str.maketrans("", "", "\t\n\r")
_FORBIDDEN_IN_HOST = frozenset(" #%/:<>?@[\\]^|\x00")
_EDGE = "".join(chr(c) for c in range(0x21))  # C0 controls and space, trimmed at both ends


@dataclass(frozen=True)
class Url:
    scheme: str
    host: str
    path: str


def _host(authority: str) -> str:
    """The host of an authority, normalised, or "" when it is not a valid one."""
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        return hostport[: end + 1].lower() if end > 0 else ""
    host = unquote(hostport.partition(":")[0], errors="strict").lower()
    if host.endswith("."):
        host = host[:-1]
    if not host or any(c in _FORBIDDEN_IN_HOST for c in host):
        return ""
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return ""
    return host


@lru_cache(maxsize=4096)
def parse_url(text: str) -> Url | None:
    """Scheme, host and path of ``text``; ``None`` when it has no scheme."""
    text = text.strip(_EDGE).translate(_DROPPED)
    found = _SCHEME.match(text)
    if found is None:
        return None
    scheme = found.group()[:-1].lower()
    rest = text[found.end() :]
    special = scheme in SPECIAL_SCHEMES
    if special:
        rest = rest.replace("\\", "/")
    host = ""
    if special or rest.startswith("//"):
        rest = rest.lstrip("/") if special else rest[2:]
        ends = [i for i in (rest.find(c) for c in "/?#") if i >= 0]
        end = min(ends, default=len(rest))
        try:
            host = _host(rest[:end])
        except UnicodeDecodeError:
            host = ""
        rest = rest[end:]
    path = re.split(r"[?#]", rest, maxsplit=1)[0]
    if special and not path:
        path = "/"
    return Url(scheme, host, path)


def url_host(text: str) -> str:
    """`host(x)`: the host a client would connect to, or ""."""
    parsed = parse_url(text)
    return parsed.host if parsed is not None else ""


def url_scheme(text: str) -> str:
    """`scheme(x)`: the scheme, lower-cased, or ""."""
    parsed = parse_url(text)
    return parsed.scheme if parsed is not None else ""


def url_path(text: str) -> str:
    """`path(x)`: the path, without query or fragment, or ""."""
    parsed = parse_url(text)
    return parsed.path if parsed is not None else ""


def in_domain(host: str, domain: str) -> bool:
    """`in_domain(h, d)`: ``h`` is ``d`` or a subdomain of it, label by label."""
    domain = domain.lower().strip(".")
    host = host.lower().rstrip(".")
    return bool(domain) and (host == domain or host.endswith("." + domain))
