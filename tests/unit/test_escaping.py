"""`escaping`: strings we did not write, made safe for the model, a log and a terminal."""

from __future__ import annotations

import json

import pytest
from lantern.escaping import (
    cap,
    escape_line,
    for_log,
    for_terminal,
    json_text,
    replace_surrogates,
)

# Every character some reader treats as a line break, a control or a reordering.
UNSAFE = "\n\r\t\x00\x07\x0b\x0c\x1b\x7f\x85\x9b\u2028\u2029\u202e\u2066\ud800.\udfff"


def test_escape_line_keeps_everything_on_one_printable_line() -> None:
    text = escape_line(f"a{UNSAFE}b")
    assert text == (
        "a\\n\\r\\t\\u0000\\u0007\\u000b\\u000c\\u001b\\u007f\\u0085\\u009b"
        "\\u2028\\u2029\\u202e\\u2066\\ud800.\\udfffb"
    )
    assert text.isprintable() and text.encode("utf-8")


def test_escape_line_leaves_ordinary_names_alone() -> None:
    for name in ("src/app.py", "naïve café.md", "日本語.txt", "back\\slash", "emoji 🎉.txt"):
        assert escape_line(name) == name


def test_cap_says_how_long_the_string_was() -> None:
    assert cap("x" * 200) == "x" * 200
    assert cap("x" * 60_000) == "x" * 200 + "…(60,000 chars)"
    assert for_log("\n" * 300) == "\\n" * 200 + "…(300 chars)"
    assert for_log({"a": 1}) == '{"a":1}'


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b]52;c;cm0gLXJmIH4=\x07b", "ab"),  # OSC 52 ended by BEL: the clipboard
        ("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),  # hyperlink, ended by ST
        ("a\x1b]0;title", "a"),  # unterminated OSC: dropped to the end
        ("a\x1b[2J\x1b[31;1mred\x1b[0mb", "aredb"),  # CSI
        ("a\x9b31mb\x9d0;t\x9cc", "abc"),  # C1 CSI and OSC
        ("a\x1bPq#0;2;0\x1b\\b", "ab"),  # DCS (sixel)
        ("a\x1bcb\x1b7c\x1b(Bd", "abcd"),  # two- and three-character ESC sequences
        ("a\rb\r\nc\x08d\x00e\u202ef\ud800", "ab\ncdef\ufffd"),
        ("keep\ttabs\nand newlines", "keep\ttabs\nand newlines"),
    ],
)
def test_for_terminal_removes_control_sequences(raw: str, shown: str) -> None:
    assert for_terminal(raw) == shown


def test_json_text_is_exact_and_safe() -> None:
    value = {"answer": f"é {UNSAFE}", UNSAFE: [UNSAFE]}
    text = json_text(value)
    assert all(c not in text for c in UNSAFE if c != ".")
    text.encode("utf-8")
    assert "é" in text
    assert json.loads(text) == value


def test_replace_surrogates_everywhere() -> None:
    value = {"\ud800": ["a\udfffb", ("\ud83d",)], "n": 1, "ok": "é"}
    assert replace_surrogates(value) == {"\ufffd": ["a\ufffdb", ("\ufffd",)], "n": 1, "ok": "é"}
    json.dumps(replace_surrogates(value), ensure_ascii=False).encode("utf-8")
