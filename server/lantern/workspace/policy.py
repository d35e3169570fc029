"""Check 2 of the read path (docs/read-path.md#check-2): which names Lantern never reads or lists.

Every component of a path is case-folded and stripped of an alternate data
stream suffix and of trailing dots and spaces before it is compared, so `.ENV`,
`.env.`, `.env::$DATA` and `.Git/config` are caught like their plain spellings,
on every file system. Windows short names and device names (`ENV~1`, `CON`) are
refused everywhere (`workspace/names.py`). A backup or editor copy of a sensitive name is
sensitive too (`.env~`, `.env.bak`, `server.pem.orig`, `#.env#`, `.#.env`,
`..env.swp`, `id_rsa.1`). The user's own `approval.deny` globs (gitignore-style,
workspace-relative) are refused the same way, compared in the root's own
`Names.key` form: folded where the root's file system folds case.

The ripgrep globs that keep these files out of list_files and search are
generated from the same tables (`Policy.rg_exclude_globs`); the Python check
stays the authority on every result.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence

from lantern.errors import ToolError
from lantern.workspace.ignore.globs import GlobList
from lantern.workspace.names import EXACT, Names, has_alias, strip_aliases, windows_alias

# Folders and files refused wherever they appear in a path.
SENSITIVE_NAMES = frozenset(
    {
        ".env",
        ".envrc",
        ".envs",
        ".git",
        ".git-credentials",
        ".ssh",
        ".aws",
        ".gnupg",
        ".npmrc",
        ".pypirc",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".vault-token",
        ".htpasswd",
        ".dockercfg",
        ".my.cnf",
        ".s3cfg",
        # a home folder's credential stores
        ".azure",
        ".oci",
        ".boto",
        ".terraformrc",
        ".password-store",
        ".authinfo",
        ".authinfo.gpg",
        ".msmtprc",
        ".fetchmailrc",
        ".curlrc",
        ".wgetrc",
        ".pki",
        ".mozilla",
        ".thunderbird",
        ".yarnrc.yml",  # Yarn's npmAuthToken
        # shell and editor histories (names ending in `history` too: `_history`)
        ".viminfo",
        ".lesshst",
        ".dbshell",
        ".histfile",
        "fish_history",
        ".zsh_sessions",
        ".bash_sessions",
    }
)
# A file or folder refused only inside a given folder: (folder, name), folded.
SENSITIVE_PAIRS = frozenset(
    {
        (".docker", "config.json"),
        (".kube", "config"),
        ("gh", "hosts.yml"),  # ~/.config/gh
        (".config", "hub"),
        (".config", "gcloud"),
        (".config", "op"),  # 1Password CLI
        (".config", "google-chrome"),
        (".config", "chromium"),
        (".config", "bravesoftware"),
        ("git", "credentials"),  # ~/.config/git/credentials
        ("share", "keyrings"),  # ~/.local/share/keyrings
        ("share", "kwalletd"),
        (".cargo", "credentials"),
        (".cargo", "credentials.toml"),
        (".gem", "credentials"),
        (".terraform.d", "credentials.tfrc.json"),
        (".m2", "settings.xml"),
        (".m2", "settings-security.xml"),
        (".gradle", "gradle.properties"),
        (".composer", "auth.json"),
        ("composer", "auth.json"),
        ("containers", "auth.json"),
        ("rclone", "rclone.conf"),
        ("doctl", "config.yaml"),
        ("github-copilot", "hosts.json"),
        ("github-copilot", "apps.json"),
        (".ngrok2", "ngrok.yml"),
        ("ngrok", "ngrok.yml"),
        ("pip", "pip.conf"),  # ~/.config/pip: index URLs with passwords
        ("pip", "pip.ini"),  # %APPDATA%\pip
        (".pip", "pip.conf"),
        (".pip", "pip.ini"),
    }
)
#: Histories (`.bash_history`, `.psql_history`, `.node_repl_history`, `.Rhistory`): a
#: dot-name ending in this.
HISTORY_END = "history"
# `.env.<anything>`, `.env-<…>`, `.env_<…>` are refused except these committed templates.
ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
SENSITIVE_SUFFIXES = (
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".jks",
    ".keystore",
    ".ppk",
    ".tfstate",
    ".tfvars",  # Terraform variables: where a module's passwords and tokens are set
    ".tfvars.json",
)
SENSITIVE_PREFIXES = ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "terraform.tfstate")
# Endings of a backup or editor copy, stripped (repeatedly) before the checks above.
BACKUP_SUFFIXES = (
    "~",
    ".bak",
    ".bk",
    ".backup",
    ".orig",
    ".old",
    ".prev",
    ".save",
    ".sav",
    ".swp",
    ".swo",
    ".swx",
    ".tmp",
    ".temp",
    ".copy",
    "-copy",
    " copy",
    "_copy",
    "-bak",
    "_bak",
)
_BACKUP = re.compile(
    "(?:" + "|".join(re.escape(s) for s in BACKUP_SUFFIXES) + r"|\.[0-9]+|\.~[0-9]+~)$"
)


def fold(name: str) -> str:
    """The form a name is compared in against the built-in list: case-folded, without
    trailing dots and spaces."""
    return name.casefold().rstrip(". ")


def _folds(name: str) -> tuple[str, ...]:
    """`fold(name)`, and the folded name without a `:stream` suffix when it has one: the
    built-in list refuses a name when either form is on it."""
    if ":" not in name:
        return (fold(name),)
    return (fold(name), fold(strip_aliases(name)))


def _originals(folded: str) -> set[str]:
    """`folded` and the names it may be a backup or editor copy of."""
    names = {folded}
    if len(folded) > 2 and folded[0] == folded[-1] == "#":  # emacs auto-save
        folded = folded[1:-1]
        names.add(folded)
    while (found := _BACKUP.search(folded)) is not None and found.start() > 0:
        folded = fold(folded[: found.start()])
        names.add(folded)
    if folded.startswith(".#"):  # emacs lock files: `.#name`
        names.add(folded[2:])
    if folded.startswith("."):  # vim swap files: `.name.swp`
        names.add(folded[1:])
    return names


def _sensitive(folded: str) -> bool:
    if folded in SENSITIVE_NAMES:
        return True
    if folded.startswith(".") and folded.endswith(HISTORY_END):
        return True
    # `.env` then anything but a letter or digit: `.env.prod`, `.env-x`, `.env@prod`, `.env+1`.
    if folded.startswith(".env") and len(folded) > 4 and not folded[4].isalnum():
        return folded not in ENV_TEMPLATES
    return folded.endswith(SENSITIVE_SUFFIXES) or folded.startswith(SENSITIVE_PREFIXES)


@functools.lru_cache(maxsize=1 << 16)  # listings check the same folder names again and again
def sensitive_component(name: str) -> bool:
    """A name from the built-in list (or a copy of one), or a Windows alias (`ENV~1`, `CON`)."""
    return name_refusal(name) is not None


@functools.lru_cache(maxsize=1 << 16)
def name_refusal(name: str) -> str | None:
    """Why one path component is refused: "sensitive", "windows_alias", or None."""
    if any(_sensitive(original) for form in _folds(name) for original in _originals(form)):
        return "sensitive"
    return "windows_alias" if windows_alias(name) is not None else None


@functools.lru_cache(maxsize=1 << 16)
def sensitive_pair(folder: str, name: str) -> bool:
    """`.kube/config`, `.docker/config.json` and their backups."""
    return any(
        (outer, original) in SENSITIVE_PAIRS
        for outer in _folds(folder)
        for form in _folds(name)
        for original in _originals(form)
    )


@functools.lru_cache(maxsize=1 << 14)
def _folder_sensitive(folder: tuple[str, ...]) -> bool:
    """`Policy.folder_sensitive` (it looks at names alone: remembered by folder)."""
    if any(sensitive_component(name) for name in folder):
        return True
    return any(sensitive_pair(a, b) for a, b in itertools.pairwise(folder))


_PAIR_FOLDERS = frozenset(folder for folder, _ in SENSITIVE_PAIRS)


def pair_folder(folder: str) -> bool:
    """Whether some file name inside `folder` can make a sensitive pair (`.kube`): when
    not, `sensitive_pair(folder, name)` is False for every name."""
    return any(form in _PAIR_FOLDERS for form in _folds(folder))


class Policy:
    """The denylist plus the user's deny globs, applied to paths inside one root.

    `for_names` gives the same policy comparing names as a given root does; the
    workspace hands each root its own (`Root.policy`).
    """

    def __init__(self, deny_globs: Sequence[str] = (), names: Names = EXACT) -> None:
        self.deny_globs = tuple(deny_globs)
        self.names = names
        self._deny = (
            GlobList((names.pattern(g) for g in self.deny_globs), widest=True)
            if deny_globs
            else None
        )
        self._views: dict[Names, Policy] = {names: self}

    def for_names(self, names: Names) -> Policy:
        """This policy as a root comparing names by `names` sees it."""
        view = self._views.get(names)
        if view is None:
            view = self._views[names] = Policy(self.deny_globs, names)
        return view

    def for_root(self, name: str) -> Policy:
        """This policy for the workspace folder `name`, one of several: a deny glob written
        with that folder's name first (`api/secrets/**`, `/api/…`, `!api/…`), as paths
        are named to the model, is matched inside the folder too, anchored at it and
        placed right after itself (so a later `!glob` keeps its place). Every glob still
        applies inside each folder as written."""
        globs = [each for glob in self.deny_globs for each in (glob, *_inside(glob, name))]
        return Policy(globs, self.names) if len(globs) > len(self.deny_globs) else self

    def refusal(self, components: Sequence[str], *, is_dir: bool = False) -> str | None:
        """Why `components` (relative to a root) must not be touched, or None."""
        if not components:
            return None
        if self.folder_sensitive(components[:-1]):
            return _folder_reason(components[:-1])
        return self.child_refusal(components[:-1], components[-1], is_dir=is_dir)

    @staticmethod
    def folder_sensitive(folder: Sequence[str]) -> bool:
        """Whether a name or a pair of names inside `folder` itself is sensitive."""
        return _folder_sensitive(tuple(folder))

    def child_refusal(
        self, folder: Sequence[str], name: str, *, is_dir: bool = False
    ) -> str | None:
        """`refusal(folder + name)` for a `folder` that `folder_sensitive` passed: a listing
        checks each folder once and then only the name of each file in it."""
        reason = name_refusal(name)
        if reason is not None:
            return reason
        if folder and sensitive_pair(folder[-1], name):
            return "sensitive"
        if self._deny is not None:
            end = "/" if is_dir else ""
            exact = self.names.exact
            if self._deny.match_file("/".join([*map(exact, folder), exact(name)]) + end):
                return "deny_glob"
            if has_alias(name) or any(map(has_alias, folder)):  # as Windows would look it up
                key = self.names.key
                if self._deny.match_file("/".join([*map(key, folder), key(name)]) + end):
                    return "deny_glob"
        return None

    def check(self, components: Sequence[str], rel: str, *, is_dir: bool = False) -> None:
        """Raise `sensitive_path` when `components` are refused."""
        reason = self.refusal(components, is_dir=is_dir)
        if reason == "sensitive":
            raise ToolError(
                "sensitive_path",
                f"{rel} is a sensitive location (secrets, keys or version-control data); "
                "Lantern never reads it",
            )
        if reason == "deny_glob":
            raise ToolError("sensitive_path", f"{rel} matches your approval.deny setting")
        if reason == "windows_alias":
            raise ToolError(
                "sensitive_path",
                f"{rel} has a Windows short or device name (like ENV~1 or CON), which can "
                "stand for another file; Lantern never reads it on any platform",
            )

    def rg_exclude_globs(self) -> Iterable[str]:
        """ripgrep `--iglob` excludes that keep refused files from being read at all.

        Built from the tables above. They may exclude less than the Python check (which
        stays the authority on every result), never more: `.env.example` must stay.
        """
        backups = "{" + ",".join(s for s in BACKUP_SUFFIXES if s != " copy") + "}"
        names = "{" + ",".join(sorted(SENSITIVE_NAMES)) + "}"
        others = "{" + ",".join(sorted(SENSITIVE_NAMES - {".env"})) + "}"
        yield f"!{names}"
        yield f"!{names}{backups}"
        # Trailing dots and spaces are folded away; `.env.<x>` is left to the Python check.
        yield f"!{others}[. ]*"
        yield "!.env[-_~ ]*"
        yield f"!*{{{','.join(SENSITIVE_SUFFIXES)}}}"
        yield f"!*{{{','.join(SENSITIVE_SUFFIXES)}}}{backups}"
        yield f"!{{{','.join(SENSITIVE_PREFIXES)}}}*"
        yield f"!.*{HISTORY_END}"
        # The pairs in two globs, not two each: rg compiles every glob it is given, and
        # that takes longer than walking a small folder.
        pairs = "{" + ",".join(f"{folder}/{name}" for folder, name in sorted(SENSITIVE_PAIRS)) + "}"
        yield f"!**/{pairs}"
        yield f"!**/{pairs}{backups}"


def _inside(glob: str, root: str) -> tuple[str, ...]:
    """`glob` as a glob inside the workspace folder `root` when it starts with that
    folder's name (`api/secrets/**` → `/secrets/**`; `api/` → `/**`), else nothing."""
    bang = "!" if glob.startswith("!") else ""
    head, slash, rest = glob.removeprefix(bang).lstrip("/").partition("/")
    if head != root or not slash:
        return ()
    return (f"{bang}/{rest or '**'}",)


def _folder_reason(folder: Sequence[str]) -> str:
    for name in folder:
        reason = name_refusal(name)
        if reason is not None:
            return reason
    return "sensitive"
