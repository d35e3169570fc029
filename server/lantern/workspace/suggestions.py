"""What `@` in a question box offers (`lantern/suggestMentions`, docs/protocol.md): the
workspace's files and folders whose path matches what the user typed, and the editor's
own symbols, each file checked.

The walk sees what the tools see: it goes down the workspace folders breadth first,
opening each folder beneath its root without following a link, and leaves out
everything the ignore files (`.gitignore`, `.lanternignore`, of enclosing roots too)
exclude — an ignored path is never offered, and nothing below an ignored, refused or
linked folder is looked at. A matching name the read path refuses (a sensitive name,
`approval.deny`, a link, not a regular file) is offered with `refused`: the read
path's own sentence for why. Every item offered has been through the read path's
checks 2–5 (`Workspace.open_checked`): a file is opened, never read.

A symbol's file is checked the same way: outside every workspace folder, the symbol is
dropped; refused for any reason (ignored included: the editor already knows it),
offered with that reason.

Work is bounded by count, whatever a client sends: the query's first `MAX_QUERY`
characters, the first `MAX_SYMBOLS` symbols, at most `MAX_ENTRIES` folder entries looked
at and `MAX_DEPTH` folders deep, at most `MAX_ITEMS` files and folders offered.
Blocking: run it in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from lantern.errors import ToolError
from lantern.escaping import cap, escape_line
from lantern.workspace.ignore.files import IgnoreWalk
from lantern.workspace.jail import open_beneath
from lantern.workspace.roots import Root, Target, Workspace

MAX_QUERY = 200  # characters of the query matched
MAX_SYMBOLS = 200  # symbols checked
MAX_ITEMS = 50  # files and folders offered
MAX_ENTRIES = 20_000  # folder entries looked at, over all roots
MAX_DEPTH = 32  # folders below a root gone into
_MAX_CHECKED = 2 * MAX_ITEMS  # best matches put through the read path's checks
_MAX_LABEL = 200  # characters of a symbol's label
# The read path's refusals that mean "not there to offer": ignored, or gone since the walk.
_LEFT_OUT = ("ignored_path", "not_found")


@dataclass(frozen=True)
class Symbol:
    """One of the editor's symbols: its name, its container's, its file (None: the URI
    names no local file) and the 0-based line it starts on."""

    name: str
    container: str | None
    path: str | None
    line: int


@dataclass(frozen=True)
class Suggestion:
    """One item of the completion list. `path` is absolute; `symbol` is the index of the
    symbol it stands for in what was given; `refused`: why it cannot be mentioned."""

    kind: Literal["file", "folder", "symbol"]
    label: str
    path: str
    detail: str | None = None
    refused: str | None = None
    symbol: int | None = None


def suggest(workspace: Workspace, query: str, symbols: Sequence[Symbol]) -> list[Suggestion]:
    """The files and folders matching `query` (best first; an empty query: the top of the
    workspace), then each symbol whose file lies in the workspace."""
    return [*_paths(workspace, query[:MAX_QUERY]), *_symbols(workspace, symbols[:MAX_SYMBOLS])]


# ----------------------------------------------------------------- files and folders


def _rank(query: str, label: str) -> tuple[int, ...] | None:
    """How well `label` (a path as the model writes it; a folder's ends in `/`) matches
    `query`, case-insensitively, lower first; None: not at all. Name (or name without its
    extension) equal, name starts with it, path starts with it, name holds it, path holds
    it, its letters in order; then the shallower, then the shorter. An empty query: the
    shallower, folders first."""
    q, path = query.casefold(), label.casefold()
    depth = path.count("/", 0, len(path) - 1)
    if not q:
        return (depth, 0 if path.endswith("/") else 1)
    name = path.rstrip("/").rpartition("/")[2]
    if q in (name, name.rpartition(".")[0]):
        tier = 0
    elif name.startswith(q):
        tier = 1
    elif path.startswith(q):
        tier = 2
    elif q in name:
        tier = 3
    elif q in path:
        tier = 4
    elif _in_order(q, path):
        tier = 5
    else:
        return None
    return (tier, depth, len(path))


def _in_order(query: str, text: str) -> bool:
    rest = iter(text)
    return all(char in rest for char in query)


@dataclass(frozen=True)
class _Found:
    key: tuple[int, ...]
    label: str
    root: Root
    parts: tuple[str, ...]
    folder: bool


class _Rules:
    """The ignore state and name policy for the paths of one root: its own, and those of
    the roots that enclose it. Holds folder handles until `close`."""

    def __init__(self, workspace: Workspace, root: Root) -> None:
        self.root = root
        self.fd = root.open()
        self._chain: list[tuple[Root, tuple[str, ...], int, IgnoreWalk]] = []
        try:
            for owner, prefix in [(root, ()), *workspace.enclosing(root)]:
                fd = self.fd if owner is root else owner.open()
                walk = IgnoreWalk(owner.ignore, fd)
                walk.hold_folders()
                self._chain.append((owner, prefix, fd, walk))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for owner, _, fd, walk in self._chain:
            walk.close()
            if owner is not self.root:
                os.close(fd)
        self._chain = []
        os.close(self.fd)

    def ignored(self, parts: tuple[str, ...], folder: bool) -> bool:
        """Excluded by an ignore file, or under a folder whose ignore files cannot be read."""
        return any(
            walk.refusal((*prefix, *parts), is_dir=folder) is not None
            for _, prefix, _, walk in self._chain
        )

    def refused(self, parts: tuple[str, ...], folder: bool) -> bool:
        """A name the policy refuses (the built-in list, `approval.deny`, Windows aliases)."""
        return any(
            owner.policy.refusal((*prefix, *parts), is_dir=folder) is not None
            for owner, prefix, _, _ in self._chain
        )


@contextlib.contextmanager
def _rules(workspace: Workspace) -> Iterator[list[_Rules]]:
    opened: list[_Rules] = []
    try:
        for root in workspace.roots:
            opened.append(_Rules(workspace, root))
        yield opened
    finally:
        for rules in opened:
            rules.close()


def _paths(workspace: Workspace, query: str) -> list[Suggestion]:
    try:
        with _rules(workspace) as rules:
            found = _walk(workspace, rules, query)
    except OSError:  # a workspace folder gone or unreadable
        return []
    found.sort(key=lambda f: (f.key, f.label))
    offered: list[Suggestion] = []
    usable = 0
    for item in found[:_MAX_CHECKED]:
        if usable >= MAX_ITEMS:
            break
        checked = _checked(workspace, item)
        if checked is not None:
            offered.append(checked)
            usable += checked.refused is None
    offered.sort(key=lambda o: o.refused is not None)  # what can be mentioned first
    return offered[:MAX_ITEMS]


def _walk(workspace: Workspace, rules: list[_Rules], query: str) -> list[_Found]:
    """The matching paths that no ignore file excludes, at most `MAX_ENTRIES` entries
    looked at, breadth first (an empty query: the top level only)."""
    found: list[_Found] = []
    queue: deque[tuple[_Rules, tuple[str, ...]]] = deque()
    for at in rules:
        if workspace.multi:  # a workspace folder is a folder of the workspace
            key = _rank(query, f"{at.root.name}/")
            if key is not None:
                found.append(_Found(key, f"{escape_line(at.root.name)}/", at.root, (), True))
        queue.append((at, ()))
    seen = 0
    while queue and seen < MAX_ENTRIES:
        at, folder = queue.popleft()
        try:
            fd = open_beneath(at.fd, folder, "", directory=True)
        except ToolError:
            continue
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        break
                    parts = (*folder, entry.name)
                    try:
                        is_folder = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    label = escape_line(workspace.relative(at.root, parts))
                    label += "/" if is_folder else ""
                    key = _rank(query, label)
                    if (key is None and not is_folder) or at.ignored(parts, is_folder):
                        continue
                    deeper = query and len(parts) < MAX_DEPTH
                    if is_folder and deeper and not at.refused(parts, True):
                        queue.append((at, parts))
                    if key is not None:
                        found.append(_Found(key, label, at.root, parts, is_folder))
        except OSError:
            pass
        finally:
            os.close(fd)
    return found


def _checked(workspace: Workspace, item: _Found) -> Suggestion | None:
    """`item` after the read path's checks: offered, offered refused, or left out."""
    target = Target(item.root, item.parts, workspace.relative(item.root, item.parts))
    refused = _refusal(workspace, target, folder=item.folder)
    if refused is not None and refused[0] in _LEFT_OUT:
        return None
    path = os.path.join(item.root.path, *item.parts)
    kind: Literal["file", "folder"] = "folder" if item.folder else "file"
    return Suggestion(kind, item.label, path, refused=refused[1] if refused else None)


def _refusal(workspace: Workspace, target: Target, *, folder: bool) -> tuple[str, str] | None:
    """Why the read path refuses `target` (its code and sentence), or None."""
    try:
        workspace.open_checked(target, "dir" if folder else "file").close()
    except ToolError as exc:
        return exc.code, escape_line(exc.message)
    except OSError as exc:
        return "io_error", escape_line(f"{target.rel}: {exc.strerror or 'could not be opened'}")
    return None


# ----------------------------------------------------------------- symbols


def _symbols(workspace: Workspace, symbols: Sequence[Symbol]) -> list[Suggestion]:
    files: dict[str, tuple[str, str | None] | None] = {}
    offered = []
    for index, symbol in enumerate(symbols):
        if symbol.path is None:
            continue
        if symbol.path not in files:
            files[symbol.path] = _symbol_file(workspace, symbol.path)
        checked = files[symbol.path]
        if checked is None:
            continue
        rel, refused = checked
        name = f"{symbol.container}.{symbol.name}" if symbol.container else symbol.name
        label = escape_line(cap(name, _MAX_LABEL))
        detail = f"{escape_line(rel)}:{symbol.line + 1}"
        offered.append(Suggestion("symbol", label, symbol.path, detail, refused, index))
    return offered


def _symbol_file(workspace: Workspace, path: str) -> tuple[str, str | None] | None:
    """The file as the model names it and why the read path refuses it (None: it may be
    read); None when it is in no workspace folder (or names none: a folder's root)."""
    try:
        target = workspace.target_for_abspath(path)
    except ToolError:
        return None
    refused = _refusal(workspace, target, folder=False)
    return target.rel, refused[1] if refused else None
