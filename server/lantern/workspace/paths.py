"""Check 1 of the read path (docs/read-path.md#check-1): the shape of a path argument.

A path the model sends must be a workspace-relative POSIX path: a string of at
most 4,096 characters, no control characters, not absolute in any POSIX or
Windows form, no backslashes and no `..` component (also when spelled with
percent-encoding or full-width dots). Nothing here touches the disk.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote

from lantern.errors import ToolError

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")
_ABSOLUTE_HINT = "use a path relative to the workspace, e.g. src/app.py"


def for_message(raw: str, limit: int = 120) -> str:
    """A safe rendering of a relative path for messages: escaped and shortened."""
    text = raw.encode("unicode_escape").decode("ascii") if _CONTROL.search(raw) else raw
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_dotdot(component: str) -> bool:
    """`..` itself, or a name that decodes to dots only (`%2e%2e`, full-width `．．`)."""
    decoded = unicodedata.normalize("NFKC", unquote(component)).strip()
    return len(decoded) >= 2 and decoded.strip(".") == ""


def split_path(raw: object, *, field: str = "path", file: bool) -> tuple[str, ...]:
    """Validate `raw` and return its components; `()` is the workspace root.

    `file=True` is for paths that must name a file (read_file): empty paths
    and a trailing slash are refused there. Folder arguments accept "", "."
    and a trailing slash as usual.
    """
    if not isinstance(raw, str):
        raise ToolError("invalid_arguments", f"{field}: must be a string")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolError("invalid_arguments", f"{field}: longer than {MAX_PATH_CHARS} characters")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("invalid_arguments", f"{field}: not valid Unicode text") from None
    if _CONTROL.search(raw):
        raise ToolError(
            "invalid_arguments", f"{field}: control characters are not allowed ({for_message(raw)})"
        )
    if raw.startswith(("/", "\\", "~")) or _WINDOWS_DRIVE.match(raw):
        raise ToolError(
            "absolute_path", f"{field}: absolute paths are not allowed; {_ABSOLUTE_HINT}"
        )
    if "\\" in raw:
        raise ToolError(
            "invalid_arguments", f"{field}: use '/' as the separator, not '\\' ({for_message(raw)})"
        )
    if file and raw.strip() in {"", "."}:
        raise ToolError("invalid_arguments", f"{field}: must name a file, e.g. src/app.py")
    if file and (raw.endswith("/") or raw.rsplit("/", 1)[-1] == "."):
        raise ToolError(
            "invalid_arguments",
            f"{field}: a file path cannot end with '/' or '/.' ({for_message(raw)})",
        )
    components = tuple(c for c in raw.split("/") if c not in {"", "."})
    for component in components:
        if _is_dotdot(component):
            raise ToolError(
                "outside_workspace",
                f"{field}: '..' is not allowed; paths stay inside the workspace",
            )
        if len(component.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise ToolError(
                "invalid_arguments", f"{field}: a name is longer than {MAX_NAME_BYTES} bytes"
            )
    return components
