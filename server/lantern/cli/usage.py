"""The command line's one error of its own: bad flags or configuration (exit 2)."""


class UsageError(Exception):
    """Bad flags or configuration: exit 2 with a message that says how to fix it."""
