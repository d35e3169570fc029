"""Search hit lines are redacted with their context, found in the file's bytes without
splitting it (`workspace/redact_context.py`, `text.hit_texts`): a hit shows what
redacting the whole file shows, and a secret on a hit line, next to one, or reaching
into its context from above, never shows. Canaries are assembled at run time.
"""

from __future__ import annotations

import random

import pytest
from lantern.workspace.redact.redactor import BLOCK_HINT
from lantern.workspace.redact_context import MAX_CONTEXT_LINES
from lantern.workspace.text import hit_lines, hit_texts, whole_lines

from tests.unit.test_redact_lines import _PIECES

CANARY = "Cn4ry" + "-x7Q9-" + "w2Lk8Zp"
GITHUB = "ghp_" + "A1b2" * 9
SEPS = ["\n", "\r\n", "\r"]


def _data(lines: list[str], sep: str, end: bool = True) -> bytes:
    return (sep.join(lines) + (sep if end else "")).encode()


def _shown(data: bytes, numbers: list[int]) -> str:
    found, _ = hit_lines(data, numbers)
    return "\n".join(found.values())


# Pieces of text without a key block, so that hit lines take the path that redacts
# runs of lines with their context.
_RUN_PIECES = [p for p in _PIECES if not BLOCK_HINT.search(p.encode()) and "PuTTY" not in p]


@pytest.mark.parametrize("seed", range(30))
def test_hit_lines_show_what_the_whole_file_redacted_shows(seed: int) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choice(_RUN_PIECES) for _ in range(rng.randint(50, 600)))
    data = text.encode()
    assert BLOCK_HINT.search(data) is None
    originals, redacted = whole_lines(data)
    total = len(originals)
    for numbers in (range(1, total + 3), sorted(rng.sample(range(1, total + 1), min(total, 6)))):
        found, _ = hit_texts(data, numbers)
        assert sorted(found) == [n for n in numbers if n <= total]
        for number, hit in found.items():
            assert (hit.original, hit.redacted) == (originals[number - 1], redacted[number - 1])


@pytest.mark.parametrize("sep", SEPS)
def test_a_value_below_its_name_in_the_context_of_an_earlier_hit(sep: str) -> None:
    """The second hit's walk up stops at the first hit, whose context (the name line
    above both) then holds for it too."""
    lines = ["def load():", "    API_KEY = (", "        needle = 1", f'        "{CANARY}"', "    )"]
    data = _data(lines, sep)
    shown, counts = hit_lines(data, [3, 4])
    assert CANARY not in "\n".join(shown.values())
    assert shown[4] == "        [REDACTED:assignment]"
    assert counts == {"assignment": 1}


@pytest.mark.parametrize("sep", SEPS)
def test_a_yaml_value_far_below_its_key_behind_an_earlier_hit(sep: str) -> None:
    filler = [f"    line{i}: {i}" for i in range(150)]
    lines = ["config:", "  api_key: |", *filler, f"    {CANARY}", "other: 1"]
    data = _data(lines, sep)
    assert CANARY not in _shown(data, [40, len(lines) - 1])
    assert CANARY not in _shown(data, [len(lines) - 1])


@pytest.mark.parametrize("sep", SEPS)
@pytest.mark.parametrize("below", [MAX_CONTEXT_LINES - 2, MAX_CONTEXT_LINES, 3 * MAX_CONTEXT_LINES])
def test_a_yaml_value_whose_key_is_past_the_context_limit(sep: str, below: int) -> None:
    """All lines between the key and the hit are indented: when the key is farther
    up than the context reaches, the whole file is redacted."""
    secret = [f"    {CANARY}{i}" for i in range(below)]
    lines = ["root:", "  password: |", *secret, "done: 1"]
    data = _data(lines, sep)
    middle, last = len(lines) // 2, len(lines) - 1
    for hits in ([3], [middle], [last], [3, middle], [middle, last], [3, middle, last, last + 1]):
        shown = _shown(data, hits)
        assert CANARY not in shown
        assert shown.count("[REDACTED:assignment]") == len([n for n in hits if n <= last])


@pytest.mark.parametrize("sep", SEPS)
def test_a_hit_past_the_context_limit_without_a_yaml_key_keeps_near_secrets(sep: str) -> None:
    """No YAML key anywhere: a hit deep in an indented block is redacted with the
    lines the limit leaves it, which hold a name line and its value."""
    filler = [f"        step({i})" for i in range(2 * MAX_CONTEXT_LINES)]
    lines = ["run:", *filler, "        TOKEN = (", f'            "{CANARY}"', "        )"]
    data = _data(lines, sep)
    found, _ = hit_texts(data, [len(filler) + 2, len(filler) + 3])
    assert [hit.redacted for hit in found.values()][1] == "            [REDACTED:assignment]"
    assert CANARY not in _shown(data, [100, len(filler) + 3])


@pytest.mark.parametrize("sep", SEPS)
def test_a_token_split_over_a_line_break_at_either_hit_line(sep: str) -> None:
    lines = ["x = 1", f'TOKEN = "{GITHUB[:4]}" +', f'    "{GITHUB[4:]}"', "y = 2"]
    data = _data(lines, sep, end=False)
    for numbers in ([2], [3], [2, 3], [3, 4]):
        shown, counts = hit_lines(data, numbers)
        assert GITHUB[4:] not in "\n".join(shown.values())
        assert set(counts) == {"github_token"}
        assert shown.get(2, 'TOKEN = "[REDACTED:github_token]" +') == (
            'TOKEN = "[REDACTED:github_token]" +'
        )


@pytest.mark.parametrize("sep", SEPS)
def test_canaries_on_and_around_hits_in_a_long_file(sep: str) -> None:
    """Hits far apart in a large file, each near a different secret."""
    lines: list[str] = []
    hits: list[int] = []
    for block in range(40):
        lines += [f"def f{block}():", *[f"    x{i} = {i}" for i in range(block * 7)]]
        lines += ["    API_KEY = (", f'        "{CANARY}{block}"', "    )"]
        lines += ["settings:", "  secret_key: |", f"    {CANARY}y{block}", "  plain: 1"]
        hits += [len(lines) - 5, len(lines) - 1]  # the value below its name, the line below a key
    data = _data(lines, sep)
    shown, _ = hit_lines(data, hits)
    assert len(shown) == len(hits)
    assert CANARY not in "\n".join(shown.values())
    assert all(shown[n] == "        [REDACTED:assignment]" for n in hits[::2])


def test_hits_past_the_end_are_left_out_with_or_without_a_last_line_end() -> None:
    for data in (b"a\nb\n", b"a\nb", b"a\r\nb\r\n", b"a\rb\r", b"a\n\n"):
        lines, _ = whole_lines(data)
        found, _ = hit_texts(data, [1, 2, 3, 4])
        assert sorted(found) == list(range(1, len(lines) + 1))


@pytest.mark.parametrize("sep", SEPS)
def test_hit_lines_far_apart_in_a_large_file_are_the_lines_asked_for(sep: str) -> None:
    rng = random.Random(len(sep))
    widths = [0, 0, 3, 12, 40, 120, 3000]  # many lines to a piece, and lines longer than one
    lines = [f"{'x' * rng.choice(widths)}{i}" for i in range(20000)]
    data = _data(lines, sep, end=sep != "\r")
    total = len(lines)
    picks = [sorted(rng.sample(range(1, total + 1), 40)), [1, total], [total // 2, total // 2 + 1]]
    picks += [list(range(start, total + 3, step)) for start, step in ((1, 33), (7, 61), (2, 250))]
    for numbers in [*picks, list(range(total - 5, total + 3))]:
        found, _ = hit_texts(data, numbers)
        assert {n: hit.original for n, hit in found.items()} == {
            n: lines[n - 1] for n in numbers if n <= total
        }
