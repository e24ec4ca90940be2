"""`policyc lsp`: the language server for editors, over stdio."""

from __future__ import annotations

import click

from .inputs import fail


@click.command()
@click.option("--stdio", is_flag=True, help="Speak LSP on stdin/stdout (the default).")
def lsp(stdio: bool) -> None:
    """Run the policy language server (diagnostics, hover, completion, fixes)."""
    try:
        from ..authoring.lsp_server import run_stdio
    except ImportError as exc:
        fail(f"the language server needs the `lsp` extra: pip install 'policyc[lsp]' ({exc.name})")
    run_stdio()
