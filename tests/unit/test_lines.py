"""Tests for lantern.workspace.lines: the capped read and the line count every reader shares."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from lantern.errors import ToolError
from lantern.workspace.lines import breaks_before, lines_at, read_capped, ripgrep_lines


@pytest.mark.parametrize("hint", [0, 5, 100, 10_000_000])
def test_read_capped_reads_one_byte_past_the_cap_whatever_the_size_hint(
    tmp_path: Path, hint: int
) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 100_000)  # more than one 64 KiB chunk
    fd = os.open(path, os.O_RDONLY)
    try:
        assert len(read_capped(fd, 70_000, hint)) == 70_001  # "larger than the cap"
        os.lseek(fd, 0, os.SEEK_SET)
        assert read_capped(fd, 200_000, hint) == b"x" * 100_000  # all of it, no more
    finally:
        os.close(fd)


def test_utf8_lines_are_the_bytes_an_editor_holds() -> None:
    data = codecs.BOM_UTF8 + b"caf\xe9\r\nplain\nlast"
    assert lines_at(data, [3, 1, 2, 4, 0], cap=1000) == (
        3,
        {1: b"caf\xe9", 2: b"plain", 3: b"last"},
    )


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_wide_lines_are_decoded_text(codec: str) -> None:
    bom = {"utf-16-be": codecs.BOM_UTF16_BE}.get(codec, b"")
    data = bom + "é😀\r\nb\n".encode(codec)
    assert lines_at(data, [1, 2, 3], cap=1000) == (2, {1: "é😀", 2: "b"})


def test_past_the_cap_only_complete_lines_count() -> None:
    data = b"aaaa\nbbbb\ncccc\n"
    assert lines_at(data, [2, 3], cap=12) == (2, {2: b"bbbb"})
    assert lines_at(data[:12], [2, 3], cap=12) == (3, {2: b"bbbb", 3: b"cc"})  # not capped


def test_nul_without_bom_is_binary() -> None:
    with pytest.raises(ToolError) as caught:
        lines_at(b"a\n\0b\n", [1], cap=1000)
    assert caught.value.code == "binary_file"
    assert lines_at("a\n".encode("utf-16"), [1], cap=1000) == (1, {1: "a"})  # NULs of UTF-16


# --- line ends: CRLF, LF and a lone CR each end a line, as in VS Code ------------------------


def test_crlf_lf_and_a_lone_cr_each_end_a_line() -> None:
    data = b"one\r\ntwo\rthree\nfour\r\r\nsix\rseven\r"
    assert lines_at(data, range(9), cap=1000) == (
        7,
        {1: b"one", 2: b"two", 3: b"three", 4: b"four", 5: b"", 6: b"six", 7: b"seven"},
    )


def test_a_lone_cr_ends_a_line_of_decoded_text() -> None:
    data = "a\rb\r\nc\r".encode("utf-16")
    assert lines_at(data, [1, 2, 3, 4], cap=1000) == (3, {1: "a", 2: "b", 3: "c"})


def test_a_cr_at_the_cap_ends_the_line_before_it() -> None:
    data = b"aaaa\rbbbb\r\ncc"
    assert lines_at(data, [1, 2], cap=5) == (1, {1: b"aaaa"})
    assert lines_at(data, [1, 2, 3], cap=10) == (2, {1: b"aaaa", 2: b"bbbb"})  # LF cut off


def test_a_byte_is_on_the_line_whose_end_follows_it() -> None:
    line = b"y\rz\r\n"  # as ripgrep prints one of its lines
    assert [breaks_before(line, pos) for pos in range(len(line) + 1)] == [0, 0, 1, 1, 1, 2]


def test_ripgrep_line_numbers_become_editor_line_numbers() -> None:
    data = b"a\rb\rc\r\nd\re\rf\ng\n"  # ripgrep sees 3 lines, an editor 7
    assert ripgrep_lines(data, [3, 1, 2, 4]) == {1: 1, 2: 4, 3: 7}
    text = "a\rb\rc\r\nd\re\rf\ng\n"
    assert ripgrep_lines(text.encode("utf-16"), [2, 3]) == {2: 4, 3: 7}
    assert ripgrep_lines(codecs.BOM_UTF8 + data, [3]) == {3: 7}
    assert ripgrep_lines(b"a\r\nb\nc\r\n", [2, 3]) == {2: 2, 3: 3}  # no lone CR
