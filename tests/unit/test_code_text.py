"""A signature on one line: whitespace runs collapsed, cut at 240 characters with `…`;
of a long header, the start it is made from gives exactly what the whole would."""

from __future__ import annotations

import random
import re

import pytest
from lantern.code.text import SIGNATURE_CHARS, one_line


def _slow(raw: bytes) -> str:
    """The definition itself: all of `raw`, collapsed, then cut."""
    text = re.sub(r"\s+", " ", raw.decode("utf-8", "replace")).strip()
    return text if len(text) <= SIGNATURE_CHARS else text[: SIGNATURE_CHARS - 1] + "…"


def test_short_and_long_headers() -> None:
    assert one_line(b"  def  f(a,\n\t b):  ") == "def f(a, b):"
    table = b"static const int table[] = {" + b"0x12, " * 100_000 + b"};"
    assert one_line(table) == _slow(table)
    assert one_line(table).endswith("0x12, 0…")
    assert len(one_line(table)) == SIGNATURE_CHARS


@pytest.mark.parametrize("seed", range(40))
def test_a_long_header_is_cut_as_the_whole_would_be(seed: int) -> None:
    """Headers with multi-byte characters, invalid bytes and long whitespace runs around
    where the start looked at ends."""
    rng = random.Random(seed)
    pieces = [b"x", b"ab", "é".encode(), "漢".encode(), "😀".encode(), b"\xff", b" ", b"\n\t"]
    spaces = [b" " * rng.randrange(1, 5000), b"\r\n" * rng.randrange(1, 50)]
    raw = b"".join(
        rng.choice(pieces + spaces if rng.random() < 0.05 else pieces)
        for _ in range(rng.randrange(100, 6000))
    )
    assert one_line(raw) == _slow(raw)
