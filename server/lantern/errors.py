"""`ToolError`: a refusal or failure of a tool call, carrying a stable error code.

It lives outside `workspace/` and `tools/` because both raise it: the jail
refuses paths with it, the tools and the approval step fail with it.

Messages name only the workspace-relative path the model sent, never an
absolute path: every raise site builds its message from the relative form.
"""

from __future__ import annotations

from typing import Literal

ErrorCode = Literal[
    "invalid_arguments",
    "absolute_path",
    "outside_workspace",
    "not_found",
    "is_directory",
    "not_regular_file",
    "symlink",
    "sensitive_path",
    "ignored_path",
    "too_large",
    "binary_file",
    "permission_denied",
    "denied_by_user",
    "approval_timeout",
    "unknown_tool",
    "io_error",
    "unsupported_platform",
    "unsupported_language",
]


class ToolError(Exception):
    """A refusal or failure that becomes an `is_error` tool result."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
