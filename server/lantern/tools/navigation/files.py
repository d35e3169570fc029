"""Which files a navigation tool looks at, and their bytes, under the read-path rules.

No index is built up front. `find_symbol` and `find_references` narrow with ripgrep
(a case-sensitive, fixed-string word match of the name's last segment, listing files
only, `--files-with-matches`, or for `find_symbol` its first matching lines in each,
`--json`), and a folder `outline` walks with `rg --files`; both run
with the same flags as `search` and `list_files` (`ripgrep.COMMON_FLAGS`, the policy
globs, the folder's own ignore rules, `--max-filesize`). ripgrep only proposes names:
each one is checked by `ResultFilter` (the denylist, deny globs, every ignore file) and
opened through the jail beneath the root with no link followed (a link, a FIFO or a
file with several links is dropped), exactly as search's hits are, and read with the
size cap of read_file. Files in a language the engine does not know are skipped.

Candidates are taken shallowest first (then by name), at most `MAX_CANDIDATES` per
call; the rest is reported as not looked at. A visitor may end the walk early (it has
enough: a folder `outline` whose output is full); what it did not get is counted too. A
ranked walk (`find_symbol`) has ripgrep report its matching lines instead (`--json`,
`navigation/likely.py`) and searches at most `SEARCH_BUDGET` files unless more look like
they define the name: those first (the likeliest first), then the shallowest; the note
says how many of how many were searched.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lantern.code.languages import LANGUAGES, language_for
from lantern.errors import ToolError
from lantern.tools.base import ToolContext
from lantern.tools.navigation.likely import MAX_LINES, Likely, Scores
from lantern.tools.ripgrep import process as ripgrep
from lantern.tools.ripgrep.result_filter import ResultFilter, prepare, split_rel
from lantern.workspace.lines import read_capped
from lantern.workspace.roots import Opened
from lantern.workspace.text import MAX_FILE_BYTES

MAX_CANDIDATES = 2000  # files opened and parsed by one call, at most
SEARCH_BUDGET = 16  # a ranked walk's files, unless more look like definitions
Key = tuple[int, int, int, int]


def file_key(st: os.stat_result) -> Key:
    """A file's identity for the parse cache: device, inode, size, modification time."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class Loaded:
    """One file opened through the jail: its identity, and its bytes read once, on demand."""

    def __init__(self, path: str, language: str, fd: int, st: os.stat_result) -> None:
        self.path = path  # as the model writes it
        self.language = language
        self.key = file_key(st)
        self.depth = path.count("/")
        self._fd = fd
        self._data: bytes | None = None

    def data(self) -> bytes:
        """The whole file (at most MAX_FILE_BYTES: larger files are never loaded)."""
        if self._data is None:
            os.lseek(self._fd, 0, os.SEEK_SET)
            self._data = read_capped(self._fd, MAX_FILE_BYTES, self.key[2])[:MAX_FILE_BYTES]
        return self._data


Visit = Callable[[Loaded], bool | None]  # True: the visitor has enough, the walk ends


@dataclass
class Walked:
    """What one walk or narrowing looked at."""

    files: int = 0  # files opened and handed to the tool
    left: int = 0  # candidates in a known language not looked at (over MAX_CANDIDATES)
    late: bool = False  # ripgrep ran out of time: the list is incomplete
    ended: bool = False  # the visitor had enough: `left` counts what it did not get
    # A ranked walk: candidates in a known language, how many of them were chosen, and
    # how many of those because a line looks like a definition.
    candidates: int = 0
    chosen: int = 0
    likely: int = 0


def unsupported(rel: str) -> ToolError:
    known = ", ".join(sorted(LANGUAGES))
    return ToolError(
        "unsupported_language",
        f"{rel}: Lantern cannot parse this kind of file; supported languages: {known}",
    )


def too_large(rel: str) -> ToolError:
    return ToolError(
        "too_large",
        f"{rel} is larger than {MAX_FILE_BYTES // (1 << 20)} MiB; use search instead",
    )


async def _run(
    handle: Opened, ctx: ToolContext, flags: list[str], feed: Callable[[bytes, bool], None]
) -> bool:
    """Run rg under the folder handle, its output to `feed`; whether it timed out."""
    proc = await ripgrep.start([*flags, "."], handle)
    late = False
    try:
        async with asyncio.timeout(ripgrep.TIMEOUT_S):
            await ripgrep.pump(proc, feed)
            await ripgrep.check_exit(proc, "name", ctx.workspace)
    except TimeoutError:
        late = True
    finally:
        await ripgrep.stop(proc)
    return late


async def _names(handle: Opened, ctx: ToolContext, flags: list[str]) -> tuple[list[str], bool]:
    """The names rg lists (NUL-separated) under the folder handle, and whether it timed out."""
    chunks: list[bytes] = []
    late = await _run(handle, ctx, [*flags, "--null"], lambda chunk, _final: chunks.append(chunk))
    names = [n for n in os.fsdecode(b"".join(chunks)).split("\0") if n]
    return names, late


def _chosen(
    rels: list[tuple[str, ...]], check: ResultFilter, ranked: Scores, walked: Walked
) -> list[tuple[str, ...]]:
    """Of the candidates (shallowest first; those in a known language whose names the
    policy allows), those a ranked walk searches: every one that looks like it defines
    the name (the likeliest first, at most MAX_CANDIDATES), then the shallowest others
    up to SEARCH_BUDGET in all; in the order they came."""
    scores = {split_rel(name): score for name, score in ranked.best.items()}
    likely = ranked.likely
    known = [r for r in rels if language_for(r[-1]) is not None and check.name_allowed(r)]
    score = {rel: scores.get(rel, 0) + likely.named(rel[-1]) for rel in known}
    first = sorted((r for r in known if score[r] > 0), key=lambda r: (-score[r], len(r), r))
    first = first[:MAX_CANDIDATES]
    rest = [rel for rel in known if score[rel] == 0][: max(0, SEARCH_BUDGET - len(first))]
    walked.candidates, walked.chosen, walked.likely = len(known), len(first) + len(rest), len(first)
    chosen = set(first) | set(rest)
    return [rel for rel in known if rel in chosen]


def _visit_names(
    ctx: ToolContext,
    handle: Opened,
    check: ResultFilter,
    names: Sequence[str],
    visit: Visit,
    ranked: Scores | None = None,
) -> Walked:
    """Check, open and hand over each supported name, shallowest first (a worker thread);
    for a ranked walk, only the names it chooses (`_chosen`)."""
    walked = Walked()
    rels = sorted((rel for rel in map(split_rel, names) if rel), key=lambda rel: (len(rel), rel))
    if ranked is not None:
        rels = _chosen(rels, check, ranked, walked)
    for i, rel in enumerate(rels):
        if walked.files >= MAX_CANDIDATES:
            walked.left = sum(1 for rest in rels[i:] if language_for(rest[-1]) is not None)
            break
        language = language_for(rel[-1])
        if language is None or not check.name_allowed(rel):
            continue
        opened = check.open_file(rel)
        if opened is None:  # swapped, linked or gone since rg saw it: not looked at
            continue
        fd, st = opened
        try:
            if st.st_size > MAX_FILE_BYTES:
                continue
            path = ctx.workspace.relative(handle.target.root, (*handle.target.parts, *rel))
            walked.files += 1
            enough = visit(Loaded(path, language, fd, st))
        finally:
            os.close(fd)
        if enough:
            walked.left = sum(1 for rest in rels[i + 1 :] if language_for(rest[-1]) is not None)
            walked.ended = True
            break
    return walked


def file_language(handle: Opened) -> str | None:
    """The language of a file handle the tool was pointed at; None for a folder. A file in
    an unknown language or over the size cap is refused (before anyone is asked)."""
    if stat.S_ISDIR(handle.stat.st_mode):
        return None
    language = language_for(handle.target.parts[-1]) if handle.target.parts else None
    if language is None:
        raise unsupported(handle.target.rel)
    if handle.stat.st_size > MAX_FILE_BYTES:
        raise too_large(handle.target.rel)
    return language


def visit_file(handle: Opened, visit: Visit) -> None:
    """A single file the tool was pointed at (its handle passed every check)."""
    language = file_language(handle)
    assert language is not None
    visit(Loaded(handle.target.rel, language, handle.fd, handle.stat))


async def walk(
    ctx: ToolContext, handle: Opened, visit: Visit, word: str | None, ranked: bool = False
) -> Walked:
    """Hand every supported file under `handle` to `visit`: with `word`, only the files
    where it stands as a whole word (rg narrows), else every file rg lists. `ranked`
    (with `word`): only the files `_chosen` picks from rg's matching lines."""
    if not stat.S_ISDIR(handle.stat.st_mode):
        await asyncio.to_thread(visit_file, handle, visit)
        return Walked(files=1)
    check, fed = await prepare(ctx.workspace, handle.target, feed_rg=True)
    try:
        # All of rg's threads: the names are checked once it is done, not while it walks.
        flags = [
            *ripgrep.COMMON_FLAGS,
            *ripgrep.policy_flags(handle.target.root, None),
            *fed,
        ]
        scores = Scores(Likely(word)) if ranked and word is not None else None
        if word is None:
            flags.append("--files")
        else:
            flags += [
                f"--max-filesize={MAX_FILE_BYTES}",
                *(["--json", f"--max-count={MAX_LINES}"] if scores else ["--files-with-matches"]),
                "--case-sensitive",
                "--word-regexp",
                "--fixed-strings",
                "--regexp",
                word,
            ]
        if scores is None:
            names, late = await _names(handle, ctx, flags)
        else:
            late = await _run(handle, ctx, flags, scores.feed)
            names = list(scores.best)
        walked = await asyncio.to_thread(_visit_names, ctx, handle, check, names, visit, scores)
    finally:
        check.close()
    walked.late = late
    return walked


async def walk_all(
    ctx: ToolContext,
    opened: Sequence[Opened],
    visit: Visit,
    word: str | None,
    ranked: bool = False,
) -> Walked:
    """`walk` under each opened target (every root for `.` in a multi-root workspace)."""
    walked = Walked()
    for handle in opened:
        part = await walk(ctx, handle, visit, word, ranked)
        walked.files += part.files
        walked.left += part.left
        walked.late = walked.late or part.late
        walked.ended = walked.ended or part.ended
        walked.candidates += part.candidates
        walked.chosen += part.chosen
        walked.likely += part.likely
    return walked


def walk_notes(walked: Walked) -> list[str]:
    """What the model is told about files a walk did not look at."""
    notes = []
    if walked.chosen < walked.candidates:
        how = (
            f"first the {walked.likely:,} where a line looks like a definition of the name, "
            "then the shallowest"
            if walked.likely
            else "the shallowest (no line looks like a definition of the name)"
        )
        notes.append(
            f"[searched {walked.files:,} of {walked.candidates:,} candidate files: {how}; "
            "narrow with path=]"
        )
    if walked.left and not walked.ended:
        notes.append(
            f"[{walked.left:,} more candidate file(s) not looked at (over {MAX_CANDIDATES:,}); "
            "narrow with path=]"
        )
    if walked.late:
        notes.append(f"[stopped after {ripgrep.TIMEOUT_S:.0f} s; results are incomplete]")
    return notes
