"""Tests of the SEP-2624 chain executor (policy_engine.chain)."""
