"""How to reach one remote interceptor server: a command line or a URL."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .errors import ChainConfigError


@dataclass(frozen=True)
class ServerSpec:
    """A server reached over stdio (``command``) or streamable HTTP (``url``).

    ``id`` names the server in errors and qualifies its interceptors' names;
    it defaults to the URL or the command line.
    """

    command: tuple[str, ...] | None = None
    url: str | None = None
    id: str = ""
    bearer_token: str | None = field(default=None, repr=False)
    env: Mapping[str, str] | None = None
    cwd: str | None = None

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ChainConfigError("a server needs exactly one of `command` or `url`")
        if self.command is not None and not self.command:
            raise ChainConfigError("a server `command` cannot be empty")
        if self.url is not None and urlsplit(self.url).scheme not in ("http", "https"):
            raise ChainConfigError(f"server url `{self.url}` must be http or https")
        if self.bearer_token is not None and self.url is None:
            raise ChainConfigError("a bearer token only applies to a server reached by `url`")
        if not self.id:
            default = self.url if self.url is not None else shlex.join(self.command or ())
            object.__setattr__(self, "id", default)

    @classmethod
    def parse(
        cls,
        target: str | Sequence[str],
        *,
        id: str = "",
        bearer_token: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> ServerSpec:
        """A URL (``http://``, ``https://``) or a command line (a string is split like a shell)."""
        if isinstance(target, str) and urlsplit(target).scheme in ("http", "https"):
            return cls(url=target, id=id, bearer_token=bearer_token, env=env, cwd=cwd)
        argv = shlex.split(target) if isinstance(target, str) else list(target)
        return cls(command=tuple(argv), id=id, bearer_token=bearer_token, env=env, cwd=cwd)
