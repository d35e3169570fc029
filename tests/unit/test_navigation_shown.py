"""Definitions shown from the redacted text: many lines wanted from a long file are
redacted each with its context, and from a file they mostly fill, the text at once;
both ways show exactly the same lines."""

from __future__ import annotations

import pytest
from lantern.code.definitions import definitions
from lantern.tools.navigation import shown

# A GitHub token shape the redactor knows, built at run time (no scanner flags the repo).
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z0A"


def _module(functions: int, body: int) -> bytes:
    """Functions with `body` lines each; secrets in some headers, on the line after one,
    in a header's second line and as a constant."""
    parts = [f'API_KEY = "{TOKEN}"\n']
    for i in range(functions):
        if i % 7 == 0:
            parts.append(f'def fetch_{i}(host, token="{TOKEN}"):\n')
        elif i % 7 == 1:
            parts.append(f'def send_{i}(\n    host,\n    password="{TOKEN}",\n):\n')
        elif i % 7 == 2:
            parts.append(f'def plain_{i}(host):\n    secret = "{TOKEN}"\n')
        else:
            parts.append(f"def plain_{i}(host, port=80):\n")
        parts.extend(f"    value_{j} = host * {j}\n" for j in range(body))
    return "".join(parts).encode()


@pytest.mark.parametrize("body", [1, 12])
def test_each_line_with_its_context_shows_what_the_whole_text_shows(
    body: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _module(300, body)
    found = definitions(data, "python")
    assert len(found) == 301
    as_chosen = shown.show_definitions("m.py", data, found)
    monkeypatch.setattr(shown, "WHOLE_SHARE", 10**9)  # always the whole text
    whole = shown.show_definitions("m.py", data, found)
    monkeypatch.setattr(shown, "WHOLE_FILE_AT", 10**9)  # never the whole text
    each = shown.show_definitions("m.py", data, found)
    assert as_chosen == whole == each
    assert all(TOKEN not in item.line for item in whole)
    assert sum(item.redactions for item in whole) >= 300 // 7
