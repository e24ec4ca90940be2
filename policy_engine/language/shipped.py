"""Where the shipped policy packs live, in a checkout and in an installed wheel.

The wheel carries ``policies/`` inside the package (``policy_engine/policies``);
a checkout keeps it at the repository's root. Users find it with
``policyc policies path``; the conformance adapter binds a pack from it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped_policies_dir() -> Path:
    """The shipped ``policies/`` folder; FileNotFoundError names both places looked in."""
    packaged = Path(str(resources.files("policy_engine"))) / "policies"
    if packaged.is_dir():
        return packaged
    in_checkout = Path(__file__).resolve().parents[2] / "policies"
    if in_checkout.is_dir():
        return in_checkout
    raise FileNotFoundError(f"the shipped policies were not found ({packaged} or {in_checkout})")
