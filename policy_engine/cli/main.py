"""The `policyc` command. Subcommands load lazily: `policyc check` must start
fast and never import the MCP SDK, which only `serve` and the chain need."""

from __future__ import annotations

import importlib
from typing import Any

import click

from .. import __version__

_COMMANDS = {
    "check": ("policy_engine.cli.check", "check", "Check policy files and report diagnostics."),
    "fmt": ("policy_engine.cli.fmt", "fmt", "Format policy files in the canonical layout."),
    "eval": ("policy_engine.cli.eval", "eval_command", "Run one message through the chain."),
    "test": ("policy_engine.cli.test", "test", "Run the test blocks of a policy set."),
    "serve": ("policy_engine.cli.serve", "serve", "Serve policies as an MCP interceptor server."),
    "gateway": (
        "policy_engine.cli.gateway",
        "gateway",
        "Run policies on live MCP traffic between a client and its servers.",
    ),
    "replay": ("policy_engine.cli.replay", "replay", "Replay recorded traffic through a set."),
    "diff": (
        "policy_engine.cli.diff",
        "diff",
        "Compare two policy sets in structure and behaviour.",
    ),
    "analyze": ("policy_engine.cli.analyze", "analyze", "Find rules that cannot fire or matter."),
    "lsp": ("policy_engine.cli.lsp", "lsp", "Run the language server for editors (stdio)."),
    "playground": (
        "policy_engine.cli.playground",
        "playground",
        "Serve a local page to try policies on payloads.",
    ),
    "policies": (
        "policy_engine.cli.policies",
        "policies",
        "Find the policy packs shipped with policyc.",
    ),
    "conformance": (
        "policy_engine.cli.conformance",
        "conformance",
        "Run the SEP-2624 conformance fixtures against a server.",
    ),
    "conformance-adapter": (
        "policy_engine.cli.conformance_adapter",
        "conformance_adapter",
        "Serve one fixture's interceptors (the reference adapter).",
    ),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        command: click.Command = getattr(module, entry[1])
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, entry[2]) for name, entry in _COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="policyc")
def cli() -> None:
    """policyc: declarative policies for MCP, compiled into SEP-2624 interceptors."""


def main(argv: list[str] | None = None) -> Any:
    return cli.main(args=argv, prog_name="policyc")


if __name__ == "__main__":
    main()
