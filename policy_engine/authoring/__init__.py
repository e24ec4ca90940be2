"""Authoring front ends: the language server and the playground.

Both are views over the language pipeline and the compiler (what `policyc
check` and `policyc eval --explain` run); nothing here knows the language
beyond what those public entry points report.
"""
