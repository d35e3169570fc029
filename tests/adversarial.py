"""Adversarial inputs for the linear-time rules: one maker per pattern family.

Each maker takes a size in bytes (roughly) and returns text shaped to make a
backtracking regex or a rescanning loop take quadratic (or worse) time: long runs of
the characters a pattern repeats, with no final match. Used by the hang tests
(tests/unit/test_linear_time.py) at 1-5 MB and by benchmarks/adversarial_bench.py.
"""

from __future__ import annotations


def yaml_nested(size: int) -> str:
    """`k0_key: |` with `k1_key: |` one space deeper below it, and so on, then filler
    lines deeper still: every key's block holds all the keys and lines below it."""
    depth = min(1000, max(10, size // 2000))
    keys = [" " * i + f"k{i}_key: |" for i in range(depth)]
    filler = " " * depth + "plain words here"
    lines = (size - sum(map(len, keys))) // (len(filler) + 1)
    return "\n".join(keys + [filler] * max(1, lines)) + "\n"


def yaml_plain_nested(size: int) -> str:
    """The same with plain `key:` (a nested mapping below each key)."""
    return yaml_nested(size).replace(": |", ":")


def deep_file(size: int) -> bytes:
    """One unindented line, then indented lines: every line's context reaches the top."""
    line = "  " + "x" * 60
    return ("top: 1\n" + "\n".join([line] * (size // (len(line) + 1))) + "\n").encode()


def long_lines_file(size: int) -> bytes:
    """Lines of 3 KB, every one a search hit, none unindented after the first."""
    line = "  " + "word " * 600
    return ("top: 1\n" + "\n".join([line] * (size // (len(line) + 1))) + "\n").encode()


def fence_spaces(size: int) -> str:
    """A code fence, then a long run of spaces and no closing fence."""
    return "```" + " " * size + "x"


def clean_fence_spaces(size: int) -> str:
    """Prose after markup: many fences, each followed by a long run of spaces."""
    return "<tool_call>{}</tool_call>" + ("```" + " " * 1000 + "x") * (size // 1004)


def function_spaces(size: int) -> str:
    """`<function=name` followed by a long run of spaces and no `{` or `>`."""
    return "<function=read_file" + " " * size + "x"


def parameters_unclosed(size: int) -> str:
    """A Qwen3-Coder call with thousands of `<parameter=` and no closing tag."""
    return "<function=read_file>" + "<parameter=p>\n" * (size // 14)


def functions_unclosed(size: int) -> str:
    """A `<tool_call>` block of `<function=a` with no `>` anywhere."""
    return "<tool_call>x" + "<function=a" * (size // 11) + "</tool_call>"


def deepseek_spaces(size: int) -> str:
    """A DeepSeek call token followed by long runs of whitespace and no end token."""
    begin = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"
    return begin + "function" + " " * (size // 2) + "<｜tool▁sep｜>name" + " " * (size // 2)


def harmony_spaces(size: int) -> str:
    return "<|channel|>commentary to=functions.read_file" + " " * size + "x"


def kimi_spaces(size: int) -> str:
    return (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.a"
        + ".a" * (size // 4)
        + " " * (size // 2)
    )


def unreadable_blocks(size: int) -> str:
    """Thousands of `<tool_call>` blocks that hold no readable call."""
    return "<tool_call>x</tool_call>\n" * (size // 25)


def midline_think(size: int) -> str:
    """An answer with `<think>` tags in the middle of its lines (quoted, not openers)."""
    return "see x<think> " * (size // 13)


def think_unclosed(size: int) -> list[str]:
    """A reasoning model's reply in 4-character chunks with no closing `</think>`."""
    text = ("reasoning step, " * (size // 16 + 1))[:size]
    return [text[i : i + 4] for i in range(0, len(text), 4)]


def spaces_unclosed(size: int) -> list[str]:
    """A reply that is a long run of spaces, then words, in 4-character chunks."""
    text = " " * (size // 2) + ("word " * (size // 10))
    return [text[i : i + 4] for i in range(0, len(text), 4)]


def glob_name(length: int) -> str:
    """A name that `*a*a*a*a*a*a*a*a*b` nearly matches: a long run of `a`, no `b`."""
    return "a" * length + "c"


GREEDY_GLOB = "*a*a*a*a*a*a*a*a*b"

# Long runs of the characters the redaction patterns repeat, with no final match.
REDACT_RUNS: dict[str, str] = {
    "spaces": " ",
    "letters": "a",
    "key=": "api_key=",
    "key: ": "key: ",
    "colons": ":",
    "at": "@",
    "url": "://a:",
    "quotes": "\"'",
    "quoted key": '"token" ',
    "literal chain": '"a" + ',
    "begin": "-----BEGIN ",
    "private key": "-----BEGIN A PRIVATE KEY----- ",
    "putty": "Private-Lines: 9\n",
    "curl": "curl -u a:b ",
    "xml": "<key>",
    "define": "'key', ",
    "opener": "API_KEY = (\n",
    "jwt": "eyJ.",
    "tabs yaml": "secret:\t",
    "dashes": "-",
    "sk-": "sk-",
}


def redact_run(name: str, size: int) -> str:
    unit = REDACT_RUNS[name]
    return unit * (size // len(unit))
