"""Separating the answer from reasoning and tool-call markup inside streamed content.

Many local setups (LM Studio, vLLM without a reasoning parser, llama.cpp without
``--jinja``) put the model's private reasoning in the content as
``<think>…</think>``; some chat templates even open the block in the prompt, so
the reply starts with reasoning and a lone ``</think>``. Models that write tool
calls as text (``<tool_call>{…}</tool_call>``, Mistral ``[TOOL_CALLS]``) must not
have that markup streamed as the answer; it is kept in the content so the loop
can parse it. Where markup starts is `markup.MARKERS`, the list the parser
reads by, so nothing hidden here can come back as an answer unread. Tags may be
split over chunks, so a tail that could be the start of a tag is held back until
the next chunk decides it.
"""

from __future__ import annotations

import functools
import re

from lantern.agent.protocol.markup import MARKERS, has_markup

# gpt-oss "harmony" format, as servers without its parser pass it through: reasoning in
# the analysis channel up to <|end|>, the answer after the final channel's header, tool
# calls in the commentary channel ("to=functions.name … <|message|>{…}<|call|>").
_HARMONY_OPENERS = (
    "<|channel|>analysis<|message|>", "<|start|>assistant<|channel|>analysis<|message|>",
)  # fmt: skip
_HARMONY_NOISE = (
    "<|start|>assistant<|channel|>final<|message|>", "<|channel|>final<|message|>",
    "<|return|>", "<|end|>",
)  # fmt: skip
_OPENERS = ("<think>", "<thinking>", *_HARMONY_OPENERS)
_CLOSERS = ("</think>", "</thinking>", "<|end|>")
# How a reply that is nothing but a JSON or pythonic call starts (maybe fenced), and a
# fence still being opened; such a start is held back, at most this many characters.
_CALL_START = re.compile(r"(?:```[A-Za-z]*+\s*+)?[\[{]")
_FENCE_OPENING = re.compile(r"`{1,3}[A-Za-z]*\s*")
_HOLD_LIMIT = 4000
_TAG_STARTS = frozenset(tag[0] for tag in _OPENERS + _CLOSERS + MARKERS + _HARMONY_NOISE)
_TAG_START = re.compile("[" + re.escape("".join(sorted(_TAG_STARTS))) + "]")
_LEADING_SPACE = re.compile(r"\s++")
# While the start of a reasoning model's reply is held, only these can end the hold
# (`<|end|>` before any opening tag is harmony noise, dropped): see `_Held`.
_HOLD_ENDS = ("</think>", "</thinking>", *_OPENERS)
_OVERLAP = max(map(len, _HOLD_ENDS)) - 1  # a tag split over chunks is still found


def _partial_tail(text: str, tags: tuple[str, ...]) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of one of `tags`."""
    longest = max(len(t) for t in tags) - 1
    window = text[-longest:]
    # Only a suffix starting with a tag's first character can match.
    for start in range(len(window)):
        if window[start] in _TAG_STARTS:
            candidate = window[start:]
            if any(len(candidate) < len(t) and t.startswith(candidate) for t in tags):
                return len(candidate)
    return 0


@functools.cache
def _any_of(tags: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(tag) for tag in sorted(tags, key=len, reverse=True)))


def _find_first(text: str, tags: tuple[str, ...], start: int = 0) -> tuple[int, str]:
    """The first of `tags` at or after `start`: a scan that stops there, so a text with
    many tags is not searched to its end once per tag."""
    found = _any_of(tags).search(text, start)
    return (found.start(), found.group()) if found else (-1, "")


class _Held:
    """Chunks that arrive while nothing can be decided, kept without being scanned again.

    Two cases: the reply so far is only whitespace (`blank`), or a reasoning model's
    reply is held until a ``</think>`` shows whether it was reasoning. Each chunk is
    looked at once, with the few characters before it (a tag split over chunks); only
    a chunk that may decide something sends the whole text back through the filter,
    which happens at most a few times per reply, so holding stays linear.
    """

    def __init__(self, tail: str, *, blank: bool, opened: bool) -> None:
        self.chunks: list[str] = []
        self._tail = tail[-_OVERLAP:]
        self.blank = blank
        self._opened = opened  # an opening tag came first: only the end decides now

    def absorb(self, chunk: str) -> bool:
        """Keep `chunk` if it cannot decide anything; False means run the filter."""
        if self.blank:
            if chunk.strip():
                return False
        elif not self._opened:
            window = self._tail + chunk
            if any(tag in window for tag in _HOLD_ENDS):
                return False
            self._tail = window[-_OVERLAP:]
        self.chunks.append(chunk)
        return True


class ContentFilter:
    """Feed content deltas; get back (answer text to show, reasoning text) per delta.

    `hold_leading`: keep back the start of the reply until it is clear whether a
    lone ``</think>`` ends a reasoning block opened in the prompt (for reasoning
    models); otherwise that case is still removed from `content`, but what was
    already streamed cannot be taken back.
    """

    def __init__(self, *, hold_leading: bool = False) -> None:
        self._pending = ""
        self._state = "leading"  # leading | answer | think
        self._hold_leading = hold_leading
        self._answer: list[str] = []  # everything that is not reasoning, markup included
        self._reasoning: list[str] = []
        self._markup = False  # tool-call markup started: show nothing more
        self._skip_space = False  # drop whitespace right after a think block
        self._lead: list[str] = []  # whitespace before anything was decided, given back later
        self._line_start = True  # the answer so far ends a line (trailing blanks aside)
        self._held: _Held | None = None

    @property
    def content(self) -> str:
        return "".join(self._answer)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    def stop_holding(self) -> None:
        """The server separates reasoning itself, so the reply's start need not wait."""
        self._hold_leading = False

    def feed(self, text: str) -> tuple[str, str]:
        if self._held is not None:
            if (self._held.blank or self._hold_leading) and self._held.absorb(text):
                return "", ""
            self._release()
        self._pending += text
        return self._run(final=False)

    def finish(self) -> tuple[str, str]:
        self._release()
        answer, thought = self._run(final=True)
        if self._lead:  # a reply of whitespace only is an answer, as it came
            shown: list[str] = []
            self._emit("", shown)
            answer += "".join(shown)
        return answer, thought

    def _release(self) -> None:
        if self._held is not None:
            self._pending += "".join(self._held.chunks)
            self._held = None

    def _run(self, *, final: bool) -> tuple[str, str]:
        answer: list[str] = []
        thought: list[str] = []
        while True:
            progressed = self._step(final, answer, thought)
            if not progressed:
                break
        blank = self._state == "leading" and not self._pending and self._lead
        if not final and blank and not self._answer and self._held is None:
            self._held = _Held("", blank=True, opened=False)
        return "".join(answer), "".join(thought)

    def _step(self, final: bool, answer: list[str], thought: list[str]) -> bool:
        """Consume what can be decided of the pending text; False when nothing more can be."""
        text = self._pending
        if not text:
            return False
        if self._state == "think":
            at, tag = _find_first(text, _CLOSERS)
            if at >= 0:
                self._think(text[:at], thought)
                self._pending = text[at + len(tag) :]
                self._state = "answer"
                self._skip_space = True
                return True
            keep = 0 if final else _partial_tail(text, _CLOSERS)
            self._think(text[: len(text) - keep], thought)
            self._pending = text[len(text) - keep :]
            return False
        if "<|" in text and not self._markup:
            text = self._drop_noise(text)
            if not text:
                return False
        # Nothing kept yet: the reply's start still decides (a think block, a whole call).
        plain = bool(self._answer) and (self._state == "answer" or not self._hold_leading)
        if plain and not self._skip_space and not _TAG_START.search(text):
            self._emit(text, answer)  # no tag can start here: the common case, kept cheap
            self._pending = ""
            return False
        if self._state == "leading":
            if not self._answer and text[:1].isspace():  # kept aside once, not stripped again
                cut = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
                self._lead.append(text[:cut])
                text = self._pending = text[cut:]
                if not text:
                    return False
            return self._leading(text, final, answer, thought)
        return self._answer_step(text, final, answer)

    def _leading(self, text: str, final: bool, answer: list[str], thought: list[str]) -> bool:
        body = text  # leading whitespace is in self._lead
        if not self._answer:  # an opening tag counts only at the very start
            opener = next((t for t in _OPENERS if body.startswith(t)), "")
            if opener:
                self._lead.clear()
                self._pending = body[len(opener) :]
                self._state = "think"
                return True
            if not final and any(t.startswith(body) for t in _OPENERS):
                return False  # maybe the start of an opening tag
            held = self._whole_call(body, final)
            if held is not None:
                return held
        close_at, close = _find_first(text, _CLOSERS)
        open_at, _ = _find_first(text, _OPENERS)
        if close_at >= 0 and (open_at < 0 or close_at < open_at):
            # Reasoning opened by the prompt template: everything so far was reasoning,
            # including anything already streamed (it can only leave the content now).
            earlier = "".join(self._lead + self._answer)
            self._answer.clear()
            self._lead.clear()
            self._line_start = True
            self._think(earlier + text[:close_at], thought)
            self._pending = text[close_at + len(close) :]
            self._state = "answer"
            self._skip_space = True
            return True
        if self._hold_leading and not final:
            self._held = _Held(text, blank=False, opened=open_at >= 0)  # until a tag comes
            return False
        # Not a think block after all: from here on it is answer text, but a lone
        # closing tag may still follow, so keep watching for one.
        if open_at >= 0 or _find_first(text, MARKERS)[0] >= 0 or final:
            self._state = "answer"
            return True
        keep = _partial_tail(text, _CLOSERS + _OPENERS + MARKERS + _HARMONY_NOISE)
        self._emit(text[: len(text) - keep], answer)
        self._pending = text[len(text) - keep :]
        return False

    def _answer_step(self, text: str, final: bool, answer: list[str]) -> bool:
        if self._skip_space:
            text = text.lstrip()
            self._pending = text
            if not text:
                return False
            self._skip_space = False
        if not self._answer and not self._markup:
            held = self._whole_call(text, final)
            if held is not None:
                return held
        open_at, opener = self._line_opener(text)
        mark_at, _ = _find_first(text, MARKERS) if not self._markup else (-1, "")
        if mark_at >= 0 and (open_at < 0 or mark_at < open_at):
            self._emit(text[:mark_at], answer)
            self._markup = True
            self._pending = text[mark_at:]
            return True
        if open_at >= 0:
            self._emit(text[:open_at], answer)
            self._pending = text[open_at + len(opener) :]
            self._state = "think"
            return True
        keep = 0 if final else _partial_tail(text, _OPENERS + MARKERS + _HARMONY_NOISE)
        self._emit(text[: len(text) - keep], answer)
        self._pending = text[len(text) - keep :]
        return False

    def _whole_call(self, body: str, final: bool) -> bool | None:
        """A reply that opens like a bare JSON or pythonic call (Llama 3.x, a ```json
        fence) is held until it ends: if it is one call, it is markup and never shown.

        Returns None when `body` cannot be such a call (go on as usual); False to wait.
        """
        if not (_CALL_START.match(body) or _FENCE_OPENING.fullmatch(body)):
            return None
        if not final and len(body) < _HOLD_LIMIT:
            return False
        if final and has_markup(body):
            self._lead.clear()
            self._answer.append(body)
            self._markup = True
            self._pending = ""
            self._state = "answer"
            return False
        return None

    def _drop_noise(self, text: str) -> str:
        """Harmony's channel headers and end tokens around the answer are not the answer.

        Only before the next opening tag: the <|end|> after it closes that block."""
        at, _ = _find_first(text, _OPENERS)
        head, rest = (text, "") if at < 0 else (text[:at], text[at:])
        for token in _HARMONY_NOISE:
            head = head.replace(token, "")
        self._pending = head + rest
        return self._pending

    def _line_opener(self, text: str) -> tuple[int, str]:
        """An opening tag at the start of a line (not one quoted inside a sentence)."""
        start = 0
        while True:
            at, tag = _find_first(text, _OPENERS, start)
            if at < 0:
                return -1, ""
            if tag in _HARMONY_OPENERS:
                return at, tag  # special tokens, never quoted prose
            if self._starts_line(text, at):
                return at, tag
            start = at + 1

    def _starts_line(self, text: str, at: int) -> bool:
        """Whether only spaces and tabs stand between `text[at]` and the line's start (or
        the start of the answer); looks back over those blanks only."""
        before = at
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        return text[before - 1] == "\n" if before > 0 else self._line_start

    def _emit(self, text: str, answer: list[str]) -> None:
        if self._lead:
            text = "".join(self._lead) + text
            self._lead.clear()
        if not text:
            return
        self._answer.append(text)
        if text.strip(" \t"):
            self._line_start = text.rstrip(" \t").endswith("\n")
        if not self._markup:
            answer.append(text)

    def _think(self, text: str, thought: list[str]) -> None:
        if text:
            self._reasoning.append(text)
            thought.append(text)
