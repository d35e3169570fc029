"""A repository can tighten Lantern, never loosen it: folder-scoped settings only narrow.

An LSP client hands the server settings in three ways: ``initializationOptions``,
the unscoped ``lantern`` section of ``workspace/configuration`` (and the same
section pushed with ``workspace/didChangeConfiguration``), and the ``lantern``
section *for one workspace folder* (``workspace/configuration`` with a
``scopeUri``). The first two are the user's own client configuration. The
per-folder one is what a project's files can set (VS Code's folder settings, an
editor's per-project config), so from it the server takes only what narrows:

- ``approval.deny`` globs are added to the user's list, never removed from it (the
  globs are gitignore-style, so a folder's ``!pattern``, which would re-include
  what the user denied, is dropped);
- limits (``maxSteps``, ``maxToolOutputBytes``, ``maxContextTokens``, the
  timeouts, ``approval.timeoutSeconds``) may go down below the value the user's
  own layers resolved to, never up; ``maxContextTokens`` left unset by the user
  is the endpoint's own window, which a folder cannot know, so it stays unset;
- ``approval.mode`` may go from ``workspace`` to ``ask``, never back;
- everything else that widens what is read or where it goes (``baseUrl``,
  ``model``, ``apiKey``, ``headers`` (they route credentials),
  ``maxOutputTokens``, ``approval.allow``, ``toolProtocol``…) is ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from lantern.settings.model import Settings

__all__ = ["ADD_ONLY", "LOWER_ONLY", "narrow"]

#: Limits a folder may lower but not raise (dotted setting names).
LOWER_ONLY = (
    "approval.timeoutSeconds",
    "maxSteps",
    "maxToolOutputBytes",
    "maxContextTokens",
    "requestTimeoutSeconds",
    "questionTimeoutSeconds",
)
#: Lists a folder may add to but not shorten.
ADD_ONLY = ("approval.deny",)


def _flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"approval": {"deny": [...]}}`` and ``{"approval.deny": [...]}`` alike → dotted keys."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{name}."))
        else:
            out[name] = value
    return out


def _positive(value: Any, integer: bool) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value <= 0 or (integer and value != int(value)):
        return None
    return value


def narrow(settings: Settings, folder: Mapping[str, Any]) -> Settings:
    """`settings` (already resolved from the user's layers) narrowed by one folder's settings.

    Values that would not narrow, or are not valid, are ignored without a word:
    the folder has no say over them.
    """
    values = _flat(folder)
    user = settings.model_dump(by_alias=True)  # nested, by setting name
    for name in (*LOWER_ONLY, *ADD_ONLY):
        *parents, key = name.split(".")
        node = user
        for part in parents:
            node = node[part]
        if name in ADD_ONLY and isinstance(values.get(name), list):
            extra = [
                g.strip()
                for g in values[name]
                if isinstance(g, str) and g.strip() and not g.strip().startswith("!")
            ]
            node[key] = tuple(dict.fromkeys([*node[key], *extra]))
        elif name in LOWER_ONLY and node[key] is not None:
            low = _positive(values.get(name), integer=isinstance(node[key], int))
            if low is not None and low < node[key]:
                node[key] = low
    if values.get("approval.mode") == "ask":
        user["approval"]["mode"] = "ask"
    return Settings.model_validate(user)
