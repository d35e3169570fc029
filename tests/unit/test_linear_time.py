"""Every pass over text from a file or a model is linear: one test per family.

Each test feeds an adversarial input of 1-5 MB (tests/adversarial.py: long runs of
what a pattern repeats, with no final match) to the real function in a child
process, and fails only when it has not finished after HANG_S (a hang is the bug;
speed is measured by benchmarks/adversarial_bench.py). Before these fixes each
of them ran for minutes or hours: a backtracking regex over a run of spaces, a
rescan of everything above per YAML key or per search hit, a held reply searched
again on every chunk, `*a*a*a…*b` through pathspec's regexes.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lantern.agent.protocol.markup import has_markup, parse
from lantern.agent.protocol.think import ContentFilter
from lantern.workspace.ignore.compiled import CompiledRules
from lantern.workspace.ignore.globs import GlobList
from lantern.workspace.policy import Policy
from lantern.workspace.redact.redactor import redact
from lantern.workspace.text import hit_lines, window

from tests import adversarial as adv
from tests.conftest import call, ctx_for, write
from tests.hang import HANG_S
from tests.unit.test_list_search import CANARY

MB = 1 << 20


def _redacts(text: str) -> None:
    assert redact(text).text.count("\n") == text.count("\n")


def _hits(data: bytes) -> None:
    total = data.count(b"\n")
    found, _ = hit_lines(data, range(total - 499, total + 1))
    assert len(found) == 500


def _parses(text: str) -> None:
    has_markup(text)
    parse(text)


def _streams(chunks: list[str], hold: bool) -> None:
    content = ContentFilter(hold_leading=hold)
    for chunk in chunks:
        content.feed(chunk)
    content.finish()
    assert len(content.content) + len(content.reasoning) >= sum(map(len, chunks)) // 2


def _window(data: bytes) -> None:
    total = data.count(b"\n")
    assert window(data, "f.yaml", total - 300, 400).lines


def _ignores(size: int) -> None:
    rules = CompiledRules.parse(f"{adv.GREEDY_GLOB}\nx/**/{adv.GREEDY_GLOB}\n")
    name = adv.glob_name(size)
    assert rules.verdict((name,), False) is None
    assert rules.verdict(("x", "y", name), False) is None
    assert rules.verdict((name[:-1] + "b",), False) is True
    globs = GlobList([adv.GREEDY_GLOB], widest=True)
    assert not globs.match_file(f"src/{name}")
    assert globs.match_file(f"{name[:-1]}b/x.py")  # inside a matching folder


# family: (function, how to make its argument)
FAMILIES: dict[str, tuple[Callable[..., None], Callable[[], tuple[Any, ...]]]] = {
    "yaml nested key: | blocks": (_redacts, lambda: (adv.yaml_nested(2 * MB),)),
    "yaml nested plain keys": (_redacts, lambda: (adv.yaml_plain_nested(2 * MB),)),
    "read_file window below nested keys": (_window, lambda: (adv.yaml_nested(2 * MB).encode(),)),
    "search hits near the end": (_hits, lambda: (adv.deep_file(2 * MB),)),
    "search hits on long lines": (_hits, lambda: (adv.long_lines_file(2 * MB),)),
    "ignore glob on a long name": (_ignores, lambda: (MB,)),
    "fence and spaces": (_parses, lambda: (adv.fence_spaces(2 * MB),)),
    "fences and spaces in prose": (_parses, lambda: (adv.clean_fence_spaces(2 * MB),)),
    "<function= and spaces": (_parses, lambda: (adv.function_spaces(2 * MB),)),
    "<parameter= unclosed": (_parses, lambda: (adv.parameters_unclosed(2 * MB),)),
    "<function= without >": (_parses, lambda: (adv.functions_unclosed(2 * MB),)),
    "DeepSeek tokens and spaces": (_parses, lambda: (adv.deepseek_spaces(2 * MB),)),
    "harmony and spaces": (_parses, lambda: (adv.harmony_spaces(2 * MB),)),
    "Kimi dots and spaces": (_parses, lambda: (adv.kimi_spaces(2 * MB),)),
    "unreadable <tool_call> blocks": (_parses, lambda: (adv.unreadable_blocks(MB),)),
    "mid-line <think>, one chunk": (_streams, lambda: ([adv.midline_think(2 * MB)], False)),
    "no </think>, reasoning model": (_streams, lambda: (adv.think_unclosed(MB), True)),
    "leading spaces, reasoning model": (_streams, lambda: (adv.spaces_unclosed(MB), True)),
    **{
        f"redact run: {name}": (_redacts, lambda name=name: (adv.redact_run(name, MB),))
        for name in adv.REDACT_RUNS
    },
}


# A fork starts at once where there is one; elsewhere the child imports this module.
_CONTEXT = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


def _child(family: str) -> None:
    run, make = FAMILIES[family]
    run(*make())


def finishes(family: str) -> None:
    """Run `family` in a child process; fail if it is still running after HANG_S."""
    proc = _CONTEXT.Process(target=_child, args=(family,))
    proc.start()
    proc.join(HANG_S)
    if proc.is_alive():
        proc.kill()
        proc.join()
        pytest.fail(f"{family}: still running after {HANG_S:.0f} s")
    assert proc.exitcode == 0, f"{family}: the child failed (exit {proc.exitcode})"


@pytest.mark.parametrize("family", list(FAMILIES))
def test_adversarial_input_finishes(family: str) -> None:
    finishes(family)


# --- what the linear forms still find ----------------------------------------------------


def test_secret_in_a_yaml_block_below_nested_keys_is_still_redacted() -> None:
    text = "outer_key: |\n  inner: 1\n  token: |\n    Xk9#mP2qLw8zAbCdEf12\nnext: 1\n"
    out = redact(text).text
    assert "Xk9#mP2qLw8zAbCdEf12" not in out
    assert out.count("\n") == text.count("\n")
    nested = "db:\n  password:\n    Xk9#mP2qLw8zAbCdEf12\n"
    assert "Xk9#" not in redact(nested).text


def test_search_hits_share_context_and_stay_redacted() -> None:
    secret = "Xk9#mP2qLw8zAbCdEf12"
    lines = ["config:", "  api_key: |", f"    {secret}"] + [f"  item{i}: 1" for i in range(600)]
    data = ("\n".join(lines) + "\n").encode()
    found, counts = hit_lines(data, [3, 300, 600])
    assert secret not in found[3] and "REDACTED" in found[3]
    assert found[300] == "  item296: 1"
    assert counts == {"assignment": 1}


def test_calls_after_spaces_and_fences_are_still_read() -> None:
    spaced = "<function=read_file" + " " * 1000 + '>{"path": "a.py"}</function>'
    assert [c.name for c in parse(spaced).calls] == ["read_file"]
    fenced = '```json  \n{"name": "read_file", "arguments": {"path": "a.py"}}\n   ```'
    assert [c.name for c in parse(fenced).calls] == ["read_file"]
    deepseek = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n"
        '```json\n{"path": "a.py"}\n```   <｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    assert [c.arguments for c in parse(deepseek).calls] == ['{"path": "a.py"}']
    qwen = "<tool_call><function=read_file><parameter=path>\na.py\n</parameter><parameter=x>"
    assert [c.arguments for c in parse(qwen + "</function></tool_call>").calls] == [
        '{"path": "a.py"}'
    ]


def test_a_held_reasoning_reply_is_released_by_its_closing_tag() -> None:
    content = ContentFilter(hold_leading=True)
    shown = [content.feed(chunk) for chunk in adv.think_unclosed(100_000)]
    assert all(answer == "" for answer, _ in shown)
    answer, thought = content.feed("</think>\n\nThe answer.")
    assert answer == "The answer." and thought.startswith("reasoning step")
    assert content.reasoning.startswith("reasoning step") and content.content == "The answer."


def test_leading_whitespace_is_kept_in_the_answer() -> None:
    content = ContentFilter()
    shown = "".join(content.feed(chunk)[0] for chunk in [" ", "\n ", " Hello", " there"])
    shown += content.finish()[0]
    assert shown == " \n  Hello there" == content.content
    blank = ContentFilter(hold_leading=True)
    blank.feed("   ")
    assert blank.finish() == ("   ", "") and blank.content == "   "


def test_a_midline_think_tag_is_answer_text() -> None:
    content = ContentFilter()
    answer = content.feed("Use x<think> here.\n  <think>hidden</think>shown")[0]
    answer += content.finish()[0]
    assert answer == "Use x<think> here.\n  shown" and content.reasoning == "hidden"


# --- approval.deny: a hostile repository's glob -----------------------------------------


async def test_a_greedy_deny_glob_answers_and_still_denies(ws: Path) -> None:
    write(ws, adv.glob_name(200), "hello\n")
    write(ws, "a" * 200 + "b", f"{CANARY}\n")
    ctx = ctx_for(ws, deny=[adv.GREEDY_GLOB])
    plain = await asyncio.wait_for(call(ctx, "read_file", path=adv.glob_name(200)), HANG_S)
    assert "hello" in plain.content
    denied = await asyncio.wait_for(call(ctx, "read_file", path="a" * 200 + "b"), HANG_S)
    assert denied.code == "sensitive_path" and CANARY not in denied.content
    listed = await asyncio.wait_for(call(ctx, "list_files"), HANG_S)
    assert adv.glob_name(200) in listed.content and "a" * 200 + "b" not in listed.content


def test_deny_globs_follow_git() -> None:
    policy = Policy(["secrets/", "*.cfg", "!public.cfg", "/top.txt"])
    assert policy.refusal(["secrets", "a.txt"]) == "deny_glob"
    assert policy.refusal(["x", "secrets"], is_dir=True) == "deny_glob"
    assert policy.refusal(["a", "b.cfg"]) == "deny_glob"
    assert policy.refusal(["a", "public.cfg"]) is None
    assert policy.refusal(["top.txt"]) == "deny_glob"
    assert policy.refusal(["sub", "top.txt"]) is None


# --- read_file redacts off the event loop -------------------------------------------------


async def test_read_file_redacts_off_the_event_loop(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lantern.workspace.text as text

    threads: list[int] = []

    def spy(source: str) -> Any:
        threads.append(threading.get_ident())
        return redact(source)

    monkeypatch.setattr(text, "redact", spy)
    write(ws, "notes.txt", f"token = 'Xk9#mP2qLw8zAbCdEf12'\n{CANARY}\n")
    result = await call(ctx_for(ws), "read_file", path="notes.txt")
    assert CANARY in result.content and "Xk9#mP2q" not in result.content
    assert threads and threading.get_ident() not in threads
