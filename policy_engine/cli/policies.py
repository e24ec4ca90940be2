"""`policyc policies`: find the policy packs that ship with policyc.

An installed wheel keeps them inside the package, where a user would not
look; `path` prints the folder (for `policyc serve "$(policyc policies path)"`)
and `list` names each pack with the interceptors it defines.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..language.pipeline import check_paths
from ..language.shipped import shipped_policies_dir
from .exit_codes import ExitCode


@click.group("policies")
def policies() -> None:
    """The policy packs shipped with policyc."""


@policies.command("path")
def path_command() -> None:
    """Print the folder holding the shipped packs."""
    click.echo(str(_folder()))


@policies.command("list")
def list_command() -> None:
    """Name each shipped pack and the interceptors it defines (tests left out)."""
    folder = _folder()
    packs = [f for f in sorted(folder.glob("*.policy")) if not f.stem.endswith("_test")]
    for file in packs:
        result = check_paths([file])
        names = [i.name for i in result.model.interceptors] if result.model else []
        click.echo(f"{file.name}: {', '.join(names) or '(does not compile)'}")


def _folder() -> Path:
    try:
        return shipped_policies_dir()
    except FileNotFoundError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(ExitCode.USAGE) from None
