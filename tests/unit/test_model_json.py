"""JSON a model wrote is read with a nesting limit, in linear time: no RecursionError
escapes, and adversarial 1-5 MB inputs finish (bounded by HANG_S, never timed)."""

from __future__ import annotations

import asyncio
import json

import pytest
from lantern import model_json
from lantern.errors import ToolError
from lantern.tools.arguments import parse_arguments

from tests.hang import HANG_S

ADVERSARIAL = [
    "[" * 5_000_000,
    "[" * 1_000_000 + "]" * 1_000_000,
    '{"a":' * 500_000 + "1" + "}" * 500_000,
    '"\\"' * 1_000_000,  # an unclosed string of escaped quotes
    '["' + "[" * 2_000_000 + '"]',  # brackets inside a string do not nest
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: t[:6])
async def test_adversarial_json_is_refused_or_read_without_recursion(text: str) -> None:
    def read() -> object:
        try:
            return model_json.loads(text)
        except json.JSONDecodeError as exc:
            return exc.msg

    result = await asyncio.wait_for(asyncio.to_thread(read), HANG_S)
    if text.startswith('["'):
        assert result == ["[" * 2_000_000]
    else:
        assert isinstance(result, str)


def test_deep_arguments_are_invalid_arguments() -> None:
    with pytest.raises(ToolError) as caught:
        parse_arguments("[" * 100_000 + "]" * 100_000)
    assert caught.value.code == "invalid_arguments"
    assert "nested deeper than 64 levels" in caught.value.message


def test_ordinary_nesting_is_read() -> None:
    text = '{"path": "a.py", "x": ' + "[" * 60 + "]" * 60 + "}"
    assert model_json.loads(text)["path"] == "a.py"
    value, end = model_json.raw_decode("junk " + text + " tail", 5)
    assert value["path"] == "a.py" and end == 5 + len(text)
    with pytest.raises(json.JSONDecodeError):
        model_json.raw_decode("[" * 100_000 + "]" * 100_000)
