"""References: find the `path:line` citations in an answer and check each one.

DESIGN section 7. The model is asked to cite code as `path:line` or
`path:start-end` (workspace-relative). `find_citations` finds those in the
final answer, in the spellings models actually use; `resolve_references`
checks each one through the jail exactly as the tools do (check 1 in
`Workspace.targets`, checks 2–5 in `Workspace.open_checked`) and reports
whether it exists (`verified`) and whether those lines were shown to the model
in this conversation (`seen`, from `SeenLines`).

Citation forms recognised (the span is always the citation text itself,
`path:line…`, as character offsets into the Python str, end exclusive):

- `src/app.py:12`, `src/app.py:12-20`, `src/app.py:12–20` (en or em dash),
  `src/app.py:L12-L20`, `src/app.py:12:5` (line:column → line 12; a column on
  either end of a range is allowed and ignored), `src/app.py#L12`,
  `src/app.py#L12-L20` (GitHub style, `C<col>` suffixes allowed);
- wherever they stand: plain text, backticks, parentheses, after "see", at
  the end of a sentence (a trailing `.` `,` `)` `:` is not part of it);
- markdown links: `[text](src/app.py:12)` gives the citation in the target;
  `[src/app.py:12](src/app.py#L12)` gives one reference, the one in the label
  (the text the reader sees), not two.

What is not a citation (judgement calls):

- a path must contain a `.` or a `/` and at least one letter, so times
  (`12:30`), numbers (`3.14:2`) and IP addresses (`10.0.0.1:8080`) are out;
- anything inside a URL with a scheme (`http://host:8080`,
  `https://github.com/o/r/blob/main/a.py#L3`, `file:///x.py:3`);
- version strings: a path that is only `v1.2`, `1.2.3` and the like;
- a citation directly followed by a letter, digit, `_`, `/` or `.<digit>`
  (`a.py:12abc`, `host.com:8080/api`, `a.py:1.2`);
- Windows paths: a path after `\\` or after a drive letter (`C:/x.py:3`);
- line numbers longer than nine digits.

Absolute paths (`/etc/passwd:1`, `~/x.py:1`) are found but are never
verified, and their `path` field is empty: like every message of the read
path, a reference never carries an absolute path. Other unverified citations
keep the path as the model wrote it (or its normalised form when it has a
valid shape, e.g. `./src/app.py` → `src/app.py`).

A file that is binary (a NUL byte in its first 8 KiB and no BOM), like
read_file refuses it, gives unverified references. Of a file larger than
8 MiB only the complete lines in its first 8 MiB are counted.

Every regular expression here is linear in the length of the answer: tokens
are only tried where they start (a lookbehind), and runs are possessive.
"""

from __future__ import annotations

import codecs
import itertools
import os
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lantern.workspace.errors import ToolError

if TYPE_CHECKING:
    from lantern.tools.base import Shown
    from lantern.workspace.roots import Target, Workspace

MAX_READ_BYTES = 8 * 1024 * 1024
_SNIFF_BYTES = 8192
_CHUNK = 1 << 20

# --- finding citations -----------------------------------------------------------------------

_PATH_CHARS = r"\w.\-/@+"  # \w is Unicode-aware: letters and digits of any script, and _
_LINE = r"\d{1,9}+"
_CITATION = re.compile(
    rf"(?<![{_PATH_CHARS}~\\])"  # only where a token starts: keeps the scan linear
    rf"(?P<path>~?[{_PATH_CHARS}]++)"
    r"(?:"
    rf":L?(?P<a>{_LINE})(?::{_LINE})?(?:[-–—]L?(?P<b>{_LINE})(?::{_LINE})?)?"
    r"|"
    rf"#L(?P<c>{_LINE})(?:C{_LINE})?(?:-L?(?P<d>{_LINE})(?:C{_LINE})?)?"
    r")"
    r"(?![\w/]|\.\d)"
)
_URL = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*+://[^\s<>\"'`)\]]*+")
_MD_LINK = re.compile(r"\[(?P<label>[^\[\]\n]*+)\]\((?P<target>[^()\s]*+)\)")
_LETTER = re.compile(r"[^\W\d_]")
_VERSION = re.compile(r"[vV]?\d++(?:\.\d++)++")

Citation = tuple[str, int, int, tuple[int, int]]


def _is_path(path: str, answer: str, start: int) -> bool:
    if "." not in path and "/" not in path:
        return False
    if not _LETTER.search(path) or _VERSION.fullmatch(path):
        return False
    # `C:/x.py` or a `scheme:/x` remainder: not a workspace citation.
    return not (path.startswith("/") and start > 0 and answer[start - 1] == ":")


def _url_spans(answer: str) -> list[tuple[int, int]]:
    return [m.span() for m in _URL.finditer(answer)]


def _inside(spans: list[tuple[int, int]], starts: list[int], lo: int, hi: int) -> bool:
    """Whether [lo, hi) overlaps one of the sorted, disjoint `spans`."""
    i = bisect_right(starts, lo) - 1
    if i >= 0 and spans[i][1] > lo:
        return True
    return i + 1 < len(spans) and spans[i + 1][0] < hi


def find_citations(answer: str) -> list[Citation]:
    """Every citation in `answer` as `(path, start, end, span)`, in order of span.

    `start`/`end` are the cited lines as written, a reversed range normalised
    (`20-12` → 12, 20); line 0 is kept (it is reported unverified).
    """
    urls = _url_spans(answer)
    url_starts = [s for s, _ in urls]
    found: list[Citation] = []
    for m in _CITATION.finditer(answer):
        path = m.group("path")
        span = m.span()
        if not _is_path(path, answer, span[0]):
            continue
        if urls and _inside(urls, url_starts, span[0], span[1]):
            continue
        first = m.group("a") or m.group("c")
        last = m.group("b") or m.group("d") or first
        a, b = int(first), int(last)
        found.append((path, min(a, b), max(a, b), span))
    return _one_per_link(answer, found)


def _one_per_link(answer: str, found: list[Citation]) -> list[Citation]:
    """In `[label](target)` where both hold a citation, keep only the label's."""
    if not found or "](" not in answer:
        return found
    drop: set[tuple[int, int]] = set()
    starts = [c[3][0] for c in found]
    for link in _MD_LINK.finditer(answer):
        label_lo, label_hi = link.span("label")
        target_lo, target_hi = link.span("target")
        in_label = _within(found, starts, label_lo, label_hi)
        if not in_label:
            continue
        drop.update(c[3] for c in _within(found, starts, target_lo, target_hi))
    return [c for c in found if c[3] not in drop]


def _within(found: list[Citation], starts: list[int], lo: int, hi: int) -> list[Citation]:
    i = bisect_right(starts, lo - 1)
    out: list[Citation] = []
    while i < len(found) and found[i][3][1] <= hi:
        if found[i][3][0] >= lo:
            out.append(found[i])
        i += 1
    return out


# --- lines shown to the model ----------------------------------------------------------------


def _norm(path: str) -> str:
    """The shape `Workspace.shown` gives: no `./`, no empty components."""
    return "/".join(c for c in path.split("/") if c not in {"", "."})


class SeenLines:
    """Which lines of which files were shown to the model in one conversation.

    Paths are as the model sees them (workspace-relative, `<folder>/…` in a
    multi-root workspace); `./a.py` and `a.py` are the same. Ranges of one
    file are kept sorted and merged, adjacent ones too (1–5 and 6–9 → 1–9).
    """

    def __init__(self) -> None:
        self._ranges: dict[str, list[tuple[int, int]]] = {}

    def add(self, path: str, start: int, end: int) -> None:
        if start > end:
            start, end = end, start
        start = max(start, 1)
        if end < start:
            return
        key = _norm(path)
        merged: list[tuple[int, int]] = []
        for lo, hi in self._ranges.get(key, []):
            if hi + 1 < start or end + 1 < lo:
                merged.append((lo, hi))
            else:
                start, end = min(start, lo), max(end, hi)
        merged.append((start, end))
        merged.sort()
        self._ranges[key] = merged

    def add_all(self, shown: Iterable[Shown]) -> None:
        for item in shown:
            self.add(item.path, item.start, item.end)

    def covers(self, path: str, start: int, end: int) -> bool:
        """Whether every line `start..end` of `path` was shown."""
        if start > end:
            start, end = end, start
        if start < 1:
            return False
        ranges = self._ranges.get(_norm(path))
        if not ranges:
            return False
        i = bisect_right(ranges, start, key=lambda r: r[0]) - 1  # the last range from <= start
        return i >= 0 and ranges[i][0] <= start and end <= ranges[i][1]

    def to_json(self) -> list[list[object]]:
        """`[[path, start, end], …]`, merged and sorted, for a conversation file."""
        return [[path, lo, hi] for path in sorted(self._ranges) for lo, hi in self._ranges[path]]

    @classmethod
    def from_json(cls, data: object) -> SeenLines:
        """The inverse of `to_json`; malformed entries are skipped (they only cost `seen`)."""
        seen = cls()
        if not isinstance(data, list):
            return seen
        for entry in data:
            if not isinstance(entry, list | tuple) or len(entry) != 3:
                continue
            path, lo, hi = entry
            if (
                isinstance(path, str)
                and type(lo) is int  # not bool
                and type(hi) is int
            ):
                seen.add(path, lo, hi)
        return seen

    def __bool__(self) -> bool:
        return bool(self._ranges)

    def __repr__(self) -> str:
        return f"SeenLines({self.to_json()!r})"


# --- checked references ----------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """One citation of the answer, checked against the workspace."""

    path: str  # workspace-relative as the model sees it; "" for an absolute citation
    start_line: int  # 1-based
    end_line: int  # 1-based, inclusive
    verified: bool  # the file is readable through the jail and the lines exist
    seen: bool  # verified, and every cited line was shown to the model
    span: tuple[int, int]  # the citation text in the answer, end exclusive
    uri: str | None  # file URI, only when verified
    end_character: int = 0  # UTF-16 length of the last cited line; 0 if unknown

    def to_dict(self) -> dict[str, object]:
        """The `references` item of the `lantern/ask` result (DESIGN section 8)."""
        return {
            "uri": self.uri,
            "range": {
                "start": {"line": max(self.start_line - 1, 0), "character": 0},
                "end": {"line": max(self.end_line - 1, 0), "character": self.end_character},
            },
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "verified": self.verified,
            "seen": self.seen,
            "span": [self.span[0], self.span[1]],
        }


@dataclass
class _File:
    """What one call learned about one cited file."""

    uri: str | None = None  # set when the file opened through the jail and is text
    lines: int = 0
    lengths: dict[int, int] = field(default_factory=dict)  # line number → UTF-16 length


def _is_absolute(path: str) -> bool:
    return path.startswith(("/", "~"))


def _read_capped(fd: int, cap: int) -> bytes:
    chunks: list[bytes] = []
    left = cap
    while left > 0:
        chunk = os.read(fd, min(left, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_WIDE_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _measure(data: bytes, wanted: Iterable[int]) -> tuple[int, dict[int, int]] | None:
    """Line count and the UTF-16 lengths of the `wanted` lines; None for a binary file.

    Lines are counted like read_file numbers them: split on `\\n`, a last line
    without `\\n` counts. Past `MAX_READ_BYTES` only complete lines count.
    """
    capped = len(data) > MAX_READ_BYTES
    data = data[:MAX_READ_BYTES]
    for bom, encoding in _WIDE_BOMS:
        if data.startswith(bom):
            lines = data[len(bom) :].decode(encoding, "replace").split("\n")
            if capped or lines[-1] == "":
                lines.pop()
            return len(lines), {
                n: _utf16_len(lines[n - 1].removesuffix("\r"))
                for n in wanted
                if 1 <= n <= len(lines)
            }
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    if not skip and b"\0" in data[:_SNIFF_BYTES]:
        return None
    total = data.count(b"\n")
    if not capped and len(data) > skip and not data.endswith(b"\n"):
        total += 1
    lengths: dict[int, int] = {}
    newlines = re.finditer(b"\n", data)
    line, begin = 1, skip  # `begin` is where line number `line` starts
    for n in sorted({n for n in wanted if 1 <= n <= total}):
        if n > line:
            nl = next(itertools.islice(newlines, n - line - 1, None))
            line, begin = n, nl.end()
        stop = data.find(b"\n", begin)
        raw = data[begin : len(data) if stop < 0 else stop]
        lengths[n] = _utf16_len(raw.removesuffix(b"\r").decode("utf-8", "replace"))
    return total, lengths


_Key = tuple[str, tuple[str, ...]]  # (root path, components): one file of the workspace


def _check(workspace: Workspace, raw: str) -> tuple[str, Target | None]:
    """Check 1 for a cited path: the path to report, and the target when its shape is valid."""
    if _is_absolute(raw):
        return "", None
    try:
        target = workspace.targets(raw, file=True)[0]
    except ToolError:
        return raw, None
    return workspace.shown(target.root, target.parts), target


def resolve_references(answer: str, workspace: Workspace, seen: SeenLines) -> list[Reference]:
    """Find the citations of `answer` and check each through the jail.

    Each cited file is opened (checks 1–5, no symlink followed, sensitive and
    ignored files refused) and read once per call, however often and in
    whatever spelling it is cited. Blocking I/O: call it on a worker thread
    from async code.
    """
    citations = find_citations(answer)
    checked: dict[str, tuple[str, Target | None]] = {}
    targets: dict[_Key, Target] = {}
    wanted: dict[_Key, set[int]] = {}
    for raw, _start, end, _span in citations:
        if raw not in checked:
            checked[raw] = _check(workspace, raw)
        target = checked[raw][1]
        if target is not None:
            key = (target.root.path, target.parts)
            targets.setdefault(key, target)
            wanted.setdefault(key, set()).add(end)
    files = {key: _open_and_measure(workspace, targets[key], ends) for key, ends in wanted.items()}

    refs: list[Reference] = []
    for raw, start, end, span in citations:
        path, target = checked[raw]
        info = files[(target.root.path, target.parts)] if target is not None else None
        if info is None or info.uri is None:
            refs.append(Reference(path, start, end, False, False, span, None))
            continue
        verified = 1 <= start <= end <= info.lines
        refs.append(
            Reference(
                path=path,
                start_line=start,
                end_line=end,
                verified=verified,
                seen=verified and seen.covers(path, start, end),
                span=span,
                uri=info.uri if verified else None,
                end_character=info.lengths.get(end, 0) if verified else 0,
            )
        )
    refs.sort(key=lambda r: r.span)
    return refs


def _open_and_measure(workspace: Workspace, target: Target, ends: set[int]) -> _File:
    """Checks 2–5 through `open_checked`, then read at most the cap + 1 and count lines."""
    info = _File()
    try:
        opened = workspace.open_checked(target, "file")
    except (ToolError, OSError):
        return info
    try:
        data = _read_capped(opened.fd, MAX_READ_BYTES + 1)
    except OSError:
        return info
    finally:
        opened.close()
    measured = _measure(data, ends)
    if measured is None:
        return info
    info.lines, info.lengths = measured
    info.uri = Path(target.root.path, *target.parts).as_uri()
    return info
