"""The note a lookup adds when some files were not searched in full: definitions nested
too deep to list, or code nested too deep to query (`code/definitions.Unlisted`)."""

from __future__ import annotations

from lantern.tools.ripgrep.result_filter import display

MAX_NAMED = 3  # files named in the note; the rest are counted


def not_searched(files: list[tuple[str, str]]) -> list[str]:
    """For (path, what was left out) of each such file: `[not searched in a.ts: …]`, one
    note naming the first few files and counting the rest (none when no file)."""
    if not files:
        return []
    named = "; ".join(f"{display(path)}: {what}" for path, what in files[:MAX_NAMED])
    more = len(files) - MAX_NAMED
    return [f"[not searched in {named}{f'; and {more:,} more file(s)' if more > 0 else ''}]"]
