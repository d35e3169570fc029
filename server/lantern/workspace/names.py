"""When two names are the same entry: the one place Lantern compares names.

A workspace root probes once (`probe_folds`) whether its file system folds case
(APFS and NTFS do by default; ext4 does not). Every comparison a refusal or an
allowance makes — deny globs, allow globs, ignore rules, the sensitive-name
list, remembered approvals, nested roots, the read-back of check 5 — goes
through that root's `Names`, so `SECRETS/token.txt` is `secrets/token.txt`
wherever the disk says it is.

Two forms, for the two directions a mistake can go:

- Refusals (deny globs, ignore rules, the built-in list) compare a name as it
  is (`Names.exact`) *and*, on every platform, as Windows would look it up
  (`Names.key`): without a trailing run of dots and spaces (`secrets.` is
  `secrets`) and without an alternate data stream suffix (`.env::$DATA` is
  `.env`). Either form refused refuses the name, so `prod:server.key` is
  refused as itself and a name that would alias a refused entry on any OS is
  refused everywhere.
- `Names.exact` is what allowances compare (allow globs, folder grants): the
  same folding where the root folds, but no alias stripping, so `docs./x` is
  never allowed by `docs/**` on a disk where it is another folder.

Names that are aliases by construction on Windows — 8.3 short names
(`ENV~1`, `GIT~1`, `SECRET~1`) and reserved device names (`CON`, `NUL.txt`,
`COM1`, `CONIN$`) — are refused on every platform (`windows_alias`).

Unicode: where a root folds, and on macOS always (APFS ignores normalization),
names are compared in NFC. Folding uses `str.casefold`, which may treat a few
more names as the same than a file system does (`ß`, `ss`); that only ever
makes a refusal wider.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import sys
import unicodedata
from dataclasses import dataclass

_SHORT_NAME = re.compile(r"[^.~\s]{1,6}~[0-9]{1,6}(?:\.[^.\s]{0,3})?", re.ASCII)
_DEVICE = re.compile(r"(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$|clock\$)")
_PROBE_ENTRIES = 64  # entries of the root looked at for a name with case in it


def windows_alias(name: str) -> str | None:
    """Why `name` is refused everywhere as a Windows alias, or None.

    `ENV~1`, `SECRET~1.TXT`: an 8.3 short name, which on Windows can be another
    spelling of any long name. `CON`, `nul.txt`, `COM1`, `CONIN$`: reserved
    device names (with any extension, trailing dots or spaces, or stream).
    """
    bare = name.split(":", 1)[0].rstrip(". ")
    if _SHORT_NAME.fullmatch(bare):
        return "short_name"
    stem = bare.split(".", 1)[0].rstrip(" ")
    if _DEVICE.fullmatch(stem.casefold()):
        return "device_name"
    return None


def has_alias(name: str) -> bool:
    """Whether `name` has a part Windows ignores on lookup (`:stream`, trailing dot/space)."""
    return ":" in name or name[-1:] in (".", " ")


def strip_aliases(name: str) -> str:
    """`name` without what Windows ignores on lookup: a `:stream` suffix, then trailing
    dots and spaces (kept when nothing would be left)."""
    if ":" in name:
        name = name.split(":", 1)[0] or name
    return name.rstrip(". ") or name


@dataclass(frozen=True)
class Names:
    """How one root compares names; `folds` is whether its file system folds case."""

    folds: bool = False
    nfc: bool = sys.platform == "darwin"

    def exact(self, name: str) -> str:
        """The form allowances compare: folded (and NFC) where the root folds."""
        if self.folds:
            return _folded(name)
        return unicodedata.normalize("NFC", name) if self.nfc else name

    def key(self, name: str) -> str:
        """The alias form refusals compare too: `exact` of the name with its aliases
        stripped. A refusal checks both forms (`exact` and, where they differ, `key`):
        `prod:server.key` is refused as itself and as `prod`."""
        return self.exact(strip_aliases(name)) if has_alias(name) else self.exact(name)

    def exact_path(self, rel: str) -> str:
        """`exact` of each component of a `/`-separated path."""
        if not (self.folds or self.nfc):
            return rel
        return "/".join(self.exact(part) for part in rel.split("/"))

    def pattern(self, text: str) -> str:
        """A glob or ignore pattern (or a whole ignore file) in the form names are compared in."""
        if self.folds:
            return unicodedata.normalize("NFC", text).casefold()
        return unicodedata.normalize("NFC", text) if self.nfc else text

    def same(self, a: str, b: str) -> bool:
        """Whether `a` and `b` name the same entry in a folder of this root."""
        return a == b or self.exact(a) == self.exact(b)

    def within(self, path: str, folder: str) -> tuple[str, ...] | None:
        """The components of absolute `path` below absolute `folder`, when it lies there
        (compared component by component, so folding may change a name's length)."""
        prefix = folder.rstrip("/") + "/"
        if path.startswith(prefix):
            return tuple(path[len(prefix) :].split("/"))
        if path.rstrip("/") == folder.rstrip("/"):
            return ()
        if not (self.folds or self.nfc):
            return None
        outer = folder.rstrip("/").split("/")
        parts = path.rstrip("/").split("/")
        if len(parts) < len(outer) or not all(map(self.same, parts, outer)):
            return None
        return tuple(parts[len(outer) :])


@functools.lru_cache(maxsize=1 << 16)
def _folded(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


EXACT = Names(folds=False, nfc=False)


def probe_folds(path: str) -> bool:
    """Whether the folder at `path` finds its entries in another case.

    Looks entries of the folder up with their case swapped (one-to-one swaps only)
    and compares identities: one entry found in another case decides it folds. With
    no entry whose name has case, looks the folder itself up in its parent (same
    device only). Undecided: True on macOS and Windows (their defaults), else False.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return sys.platform in ("darwin", "win32")
    answers: set[bool] = set()
    try:
        here = os.fstat(fd)
        with os.scandir(path) as entries:
            for n, entry in enumerate(entries):
                if n >= _PROBE_ENTRIES or True in answers:
                    break
                found = _same_in_other_case(path, entry.name, here.st_dev)
                if found is not None:
                    answers.add(found)
        parent, name = os.path.split(path.rstrip("/"))
        if not answers and parent and name:
            found = _same_in_other_case(parent, name, here.st_dev)
            if found is not None:
                answers.add(found)
    except OSError:
        pass
    finally:
        os.close(fd)
    if answers:
        return True in answers
    return sys.platform in ("darwin", "win32")


def _same_in_other_case(folder: str, name: str, dev: int) -> bool | None:
    """True/False when `name`'s case-swapped spelling answers the question, else None."""
    other = name.swapcase()
    if other == name or other.swapcase() != name:  # only one-to-one swaps (not `ß`/`SS`)
        return None
    try:
        st = os.stat(os.path.join(folder, name), follow_symlinks=False)
    except OSError:
        return None
    if st.st_dev != dev or stat.S_ISLNK(st.st_mode):
        return None
    try:
        swapped = os.stat(os.path.join(folder, other), follow_symlinks=False)
    except OSError as exc:
        return False if exc.errno in (errno.ENOENT, errno.ENOTDIR) else None
    return (swapped.st_dev, swapped.st_ino) == (st.st_dev, st.st_ino)
