"""References: find the `path:line` citations in an answer and check each one.

The model is asked to cite code as `path:line` or
`path:start-end` (workspace-relative). `find_citations` finds those in the
final answer, in the spellings models actually use; `resolve_references`
checks each one through the jail exactly as the tools do (`Workspace.targets`
and `Workspace.open_checked`, docs/read-path.md checks 1–5), counts the file's
lines with `workspace/lines.py` as read_file numbers them (`\\r\\n`, `\\n` and a
lone `\\r` each end a line, as in VS Code and LSP positions), and reports whether
the lines exist (`verified`) and whether they were shown to the model in this
conversation (`seen`, from the conversation's `SeenLines`). `check_references`
does it on a worker thread for async callers.

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

Only the first `MAX_CITATIONS` (200) citations of an answer are considered:
later ones get no reference (their text stays as the model wrote it), so an
answer of 100,000 citations costs what one of 200 does, plus one scan.

Every regular expression here is linear in the length of the answer: tokens
are only tried where they start (a lookbehind), and runs are possessive.
"""

from __future__ import annotations

import asyncio
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from lantern.agent.positions import UTF16, UTF32, ZERO, Position, Range, Units, line_units, offsets
from lantern.errors import ToolError
from lantern.shapes import OPTIONAL, UNSENT, wire
from lantern.workspace.lines import lines_at, read_capped
from lantern.workspace.text import MAX_FILE_BYTES

if TYPE_CHECKING:
    from lantern.agent.conversation import SeenLines
    from lantern.workspace.roots import Target, Workspace

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
MAX_CITATIONS = 200  # of one answer; later citations are not checked or reported


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


def find_citations(answer: str, limit: int = MAX_CITATIONS) -> list[Citation]:
    """The first `limit` citations in `answer` as `(path, start, end, span)`, in order
    of span.

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
        if len(found) >= limit:
            break
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


# --- checked references ----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Reference:
    """One citation of the answer, checked against the workspace: the `references` item of
    the `lantern/ask` result (docs/protocol.md#lanternask).

    `range` and `span` are counted in `encoding`, the LSP position encoding the
    client negotiated (`in_encoding`). Without one, the range is in UTF-16 (the LSP
    default) and `span` in code points (Python string offsets, as `lantern ask --json`
    has always printed them).

    `uri` and `range` are only present on a verified reference, so a client can hand
    verified ones straight to its location list; an unverified one never has a
    `uri: null` that a location handler would choke on.
    """

    uri: str | None = field(default=None, metadata=OPTIONAL)  # file URI, only when verified
    range: Range | None = field(default=None, init=False, metadata=OPTIONAL)  # from the rest
    path: str  # workspace-relative as the model sees it; "" for an absolute citation
    start_line: int  # 1-based
    end_line: int  # 1-based, inclusive
    verified: bool  # the file is readable through the jail and the lines exist
    seen: bool  # verified, and every cited line was shown to the model
    span: tuple[int, int] = field(metadata=wire(sent_as=list))
    """The citation text in the answer, end exclusive: code points, or in `encoding`."""
    end_width: Units = field(default=ZERO, metadata=UNSENT)  # the last cited line's length
    span_units: tuple[Units, Units] | None = field(default=None, metadata=UNSENT)
    """`span` in every unit, when measured."""
    encoding: str | None = field(default=None, metadata=UNSENT)

    def __post_init__(self) -> None:
        if self.verified and self.uri is not None:
            end = self.end_width.get(self.encoding or UTF16)
            lines = Range(Position(self.start_line - 1, 0), Position(self.end_line - 1, end))
            object.__setattr__(self, "range", lines)

    def in_encoding(self, encoding: str | None) -> Reference:
        """This reference with its range's end and its `span` counted in `encoding` (None:
        UTF-16 and code points)."""
        span = self.span
        if self.span_units is not None:
            unit = encoding or UTF32
            span = (self.span_units[0].get(unit), self.span_units[1].get(unit))
        return replace(self, span=span, encoding=encoding)


@dataclass
class _File:
    """What one call learned about one cited file."""

    uri: str | None = None  # set when the file opened through the jail and is text
    lines: int = 0
    lengths: dict[int, Units] = field(default_factory=dict)  # line number → its length


def _is_absolute(path: str) -> bool:
    return path.startswith(("/", "~"))


_Key = tuple[str, tuple[str, ...]]  # (root path, components): one file of the workspace


def _check(workspace: Workspace, raw: str) -> tuple[str, Target | None]:
    """Check 1 for a cited path: the path to report, and the target when its shape is valid."""
    if _is_absolute(raw):
        return "", None
    try:
        target = workspace.targets(raw, file=True)[0]
    except ToolError:
        return raw, None
    return workspace.relative(target.root, target.parts), target


def resolve_references(answer: str, workspace: Workspace, seen: SeenLines) -> list[Reference]:
    """Find the citations of `answer` and check each through the jail.

    Each cited file is opened (checks 1–5, no symlink followed, sensitive and
    ignored files refused) and read once per call, however often and in
    whatever spelling it is cited. Blocking I/O: async code calls `check_references`.
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

    points = offsets(answer, [p for c in citations for p in c[3]])
    refs: list[Reference] = []
    for i, (raw, start, end, span) in enumerate(citations):
        units = (points[2 * i], points[2 * i + 1])
        path, target = checked[raw]
        info = files[(target.root.path, target.parts)] if target is not None else None
        if info is None or info.uri is None:
            refs.append(
                Reference(
                    path=path,
                    start_line=start,
                    end_line=end,
                    verified=False,
                    seen=False,
                    span=span,
                    span_units=units,
                )
            )
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
                end_width=info.lengths.get(end, ZERO) if verified else ZERO,
                span_units=units,
            )
        )
    return refs  # in order of span, as `find_citations` found them


async def check_references(answer: str, workspace: Workspace, seen: SeenLines) -> list[Reference]:
    """`resolve_references` on a worker thread, so reading the cited files never blocks
    the event loop (another question, a cancel, an approval prompt)."""
    if not answer:
        return []
    return await asyncio.to_thread(resolve_references, answer, workspace, seen)


def _open_and_measure(workspace: Workspace, target: Target, ends: set[int]) -> _File:
    """Checks 2–5 through `open_checked`, then count the lines as read_file numbers them."""
    info = _File()
    try:
        opened = workspace.open_checked(target, "file")
    except (ToolError, OSError):
        return info
    try:
        data = read_capped(opened.fd, MAX_FILE_BYTES, opened.stat.st_size)
        info.lines, lines = lines_at(data, ends, MAX_FILE_BYTES)
    except (ToolError, OSError):  # a binary file, or the read failed
        return info
    finally:
        opened.close()
    info.lengths = {n: line_units(line) for n, line in lines.items()}
    info.uri = Path(target.root.path, *target.parts).as_uri()
    return info
