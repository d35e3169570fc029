"""The audit log: one JSON line per tool call and per model request.

Appended to `platformdirs.user_log_path("lantern")/audit.jsonl`. A line holds
what happened and a sha256 of what the model was sent, never file contents
and never keys. Strings the model chose (a tool name, a path) are data: each
is capped at `FIELD_CHARS` characters and escaped onto one line, and nothing
a model sends can make a write fail.

The file stays open between records, so a process that has run out of file
descriptors (a turn of many calls near `ulimit -n`) still writes its record.
Before each record the path is compared with the open file (device and inode):
a log moved away or removed (rotated) is closed and a new one opened at the path.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any

import platformdirs

from lantern.escaping import escape_line, for_log, json_text

#: The most characters of one model-chosen string kept in a record.
FIELD_CHARS = 200
# O_CLOEXEC is POSIX only; O_BINARY keeps Windows from writing "\r\n" for "\n".
_APPEND = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class AuditError(Exception):
    """The audit log cannot be written: no question runs without it. The message names the
    file and the system's reason, on one line."""


def audit_path() -> Path:
    return platformdirs.user_log_path("lantern") / "audit.jsonl"


class AuditLog:
    def __init__(
        self, path: Path | None = None, *, workspace: str = "", workspace_key: str = ""
    ) -> None:
        self.path = path or audit_path()
        self.workspace = workspace
        self.workspace_key = workspace_key
        self._lock = threading.Lock()
        self._dir_ready = False
        self._fd: int | None = None
        self._file: tuple[int, int] | None = None  # (st_dev, st_ino) of the open file

    def check(self) -> None:
        """Make sure a record can be appended (creating the file if need be), before
        anything is asked of a model; raises `AuditError` saying why not."""
        with self._lock:
            self._write(b"")

    def _append(self, record: dict[str, Any]) -> None:
        safe = {k: for_log(v, FIELD_CHARS) if isinstance(v, str) else v for k, v in record.items()}
        line = json_text(safe) + "\n"
        with self._lock:
            self._write(line.encode("utf-8"))

    def _write(self, data: bytes) -> None:
        try:
            fd = self._open()
            if data:
                os.write(fd, data)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise AuditError(
                f"cannot write the audit log {escape_line(str(self.path))}: {reason}"
            ) from None

    def _open(self) -> int:
        """The log's open handle: the one held while the path still names that file,
        else a new one (the log was moved, rotated or removed)."""
        if self._fd is not None:
            try:
                st = os.stat(self.path)
                current = (st.st_dev, st.st_ino) == self._file
            except FileNotFoundError:
                current = False
            if current:
                return self._fd
            fd, self._fd = self._fd, None
            os.close(fd)
        if not self._dir_ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._dir_ready = True
        fd = os.open(self.path, _APPEND, 0o600)
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        self._fd, self._file = fd, (st.st_dev, st.st_ino)
        return fd

    def _base(self, kind: str, conversation: str) -> dict[str, Any]:
        # The audit log's own record format (one JSON line each), not a message of the
        # wire, so not `lantern.converter`'s to write.
        return {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "kind": kind,
            "workspace": self.workspace,
            "workspaceHash": self.workspace_key,
            "conversation": conversation,
        }

    def tool_call(
        self,
        *,
        conversation: str,
        tool: str,
        path: str | None,
        decision: str,
        content: str,
        ms: float,
        source: str | None = None,
    ) -> None:
        data = content.encode("utf-8", "surrogatepass")
        record = self._base("tool", conversation) | {
            "tool": tool,
            "path": path,
            "decision": decision,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "ms": round(ms, 2),
        }
        if source is not None:  # a language server answered (find_references)
            record["source"] = source
        self._append(record)

    def model_request(
        self,
        *,
        conversation: str,
        model: str,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        bytes_sent: int,
        outcome: str,
        ms: float,
    ) -> None:
        record = self._base("model", conversation) | {
            "model": model,
            "bytes": bytes_sent,
            "promptTokens": prompt_tokens,
            "completionTokens": completion_tokens,
            "outcome": outcome,
            "ms": round(ms, 1),
        }
        self._append(record)
