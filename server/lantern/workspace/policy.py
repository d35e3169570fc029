"""Check 2 of the read path: which names Lantern never reads or lists.

Every component of a path is case-folded and stripped of trailing dots and
spaces before it is compared, so `.ENV`, `.env.` and `.Git/config` are caught
like their plain spellings. The user's own `approval.deny` globs
(gitignore-style, workspace-relative) are refused the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pathspec

from lantern.workspace.errors import ToolError

# Folders and files refused wherever they appear in a path.
SENSITIVE_NAMES = frozenset(
    {
        ".env",
        ".envrc",
        ".git",
        ".git-credentials",
        ".ssh",
        ".aws",
        ".gnupg",
        ".npmrc",
        ".pypirc",
        ".netrc",
        "_netrc",
    }
)
# `.env.<anything>` is refused except these conventional, committed templates.
ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
SENSITIVE_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk")
SENSITIVE_PREFIXES = ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa")


def fold(name: str) -> str:
    """The form a name is compared in: case-folded, trailing dots and spaces removed."""
    return name.casefold().rstrip(". ")


def sensitive_component(name: str) -> bool:
    folded = fold(name)
    if folded in SENSITIVE_NAMES:
        return True
    if folded.startswith(".env.") and folded not in ENV_TEMPLATES:
        return True
    return folded.endswith(SENSITIVE_SUFFIXES) or folded.startswith(SENSITIVE_PREFIXES)


class Policy:
    """The denylist plus the user's deny globs, applied to paths inside one root."""

    def __init__(self, deny_globs: Sequence[str] = ()) -> None:
        self.deny_globs = tuple(deny_globs)
        self._deny = pathspec.GitIgnoreSpec.from_lines(self.deny_globs) if deny_globs else None

    def refusal(self, components: Sequence[str], *, is_dir: bool = False) -> str | None:
        """Why `components` (relative to a root) must not be touched, or None."""
        for name in components:
            if sensitive_component(name):
                return "sensitive"
        if self._deny is not None and components:
            rel = "/".join(components) + ("/" if is_dir else "")
            if self._deny.match_file(rel):
                return "deny_glob"
        return None

    def check(self, components: Sequence[str], shown: str, *, is_dir: bool = False) -> None:
        """Raise `sensitive_path` when `components` are refused."""
        reason = self.refusal(components, is_dir=is_dir)
        if reason == "sensitive":
            raise ToolError(
                "sensitive_path",
                f"{shown} is a sensitive location (secrets, keys or version-control data); "
                "Lantern never reads it",
            )
        if reason == "deny_glob":
            raise ToolError("sensitive_path", f"{shown} matches your approval.deny setting")

    def allows(self, components: Sequence[str]) -> bool:
        return self.refusal(components) is None

    def rg_exclude_globs(self) -> Iterable[str]:
        """ripgrep `--iglob` excludes that keep refused files from being read at all.

        The Python check on every result stays the authority; these only spare
        ripgrep the work and keep refused content out of its output.
        """
        for name in SENSITIVE_NAMES:
            yield f"!{name}"
            # `.env.example` must stay visible, so `.env.<x>` is left to the Python check.
            yield f"!{name}[ ]*" if name == ".env" else f"!{name}[. ]*"
        for suffix in SENSITIVE_SUFFIXES:
            yield f"!*{suffix}"
        for prefix in SENSITIVE_PREFIXES:
            yield f"!{prefix}*"
