"""Exit codes shared by every command, so CI scripts can tell outcomes apart."""

from enum import IntEnum


class ExitCode(IntEnum):
    SUCCESS = 0
    PROBLEMS = 1  # policy errors, failed tests, a denied message, a file `fmt --check` would change
    USAGE = 2  # bad options, unreadable files, bad JSON input
