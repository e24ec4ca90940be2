"""Writes docs/cli.md from the click definitions: every command, argument and option.

    python scripts/gen_cli_docs.py          # rewrite docs/cli.md
    python scripts/gen_cli_docs.py --check  # exit 1 if docs/cli.md is out of date

The page is generated whole, so after a merge that adds or changes commands
the fix for a conflict or a stale page is to run the first command again.
tests/cli/test_cli_docs.py runs the second.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "cli.md"

INTRO = """\
# CLI reference

Every `policyc` command with its arguments and options, as `policyc COMMAND
--help` prints them. This page is generated from the click definitions by
`python scripts/gen_cli_docs.py`; `tests/cli/test_cli_docs.py` fails when it
is out of date, so do not edit it by hand.

Exit codes are shared by every command: `0` success, `1` problems found (policy
errors, failed tests, a denied message, a file `fmt --check` would change,
conformance below the threshold), `2` usage errors (bad options, unreadable
files, bad JSON input). `conformance-adapter` also exits `3` when it cannot
bind a behaviour (see [conformance.md](conformance.md#the-adapter-contract)).
"""


def render() -> str:
    sys.path.insert(0, str(REPO))
    from policy_engine.cli.main import cli

    root = click.Context(cli, info_name="policyc")
    names = cli.list_commands(root)
    commands = {name: cli.get_command(root, name) for name in names}
    lines = [INTRO, "## Commands", ""]
    lines += ["| command | what it does |", "| --- | --- |"]
    for name, command in commands.items():
        assert command is not None, name
        summary = command.get_short_help_str(limit=200)
        lines.append(f"| [`policyc {name}`](#policyc-{name}) | {summary} |")
    lines += ["", "Every command takes `-h`/`--help`; `policyc --version` prints the version."]
    for name, command in commands.items():
        assert command is not None
        lines += ["", *_command(command, click.Context(command, info_name=name, parent=root))]
    return "\n".join(lines) + "\n"


def _command(command: click.Command, ctx: click.Context) -> list[str]:
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    lines = [f"## policyc {ctx.info_name}", "", "```", usage, "```", ""]
    lines.append(inspect.cleandoc(command.help or ""))
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    if arguments:
        lines += ["", "Arguments:", ""]
        for argument in arguments:
            many = " (one or more)" if argument.nargs == -1 and argument.required else ""
            optional = "" if argument.required else " (optional)"
            lines.append(f"- `{argument.make_metavar(ctx)}`{many}{optional}")
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
    records = [record for record in (o.get_help_record(ctx) for o in options) if record]
    if records:
        lines += ["", "Options:", ""]
        for flags, help_text in records:
            lines.append(f"- `{flags}`: {help_text}" if help_text else f"- `{flags}`")
    if isinstance(command, click.Group):
        lines += ["", "Subcommands:", ""]
        for sub_name in command.list_commands(ctx):
            sub = command.get_command(ctx, sub_name)
            assert sub is not None, sub_name
            lines.append(f"- `{ctx.command_path} {sub_name}`: {sub.get_short_help_str(limit=200)}")
    return lines


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        if PAGE.exists() and PAGE.read_text(encoding="utf-8") == text:
            return 0
        print(f"{PAGE.relative_to(REPO)} is out of date: run `python scripts/gen_cli_docs.py`")
        return 1
    if argv:
        print(__doc__)
        return 2
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
