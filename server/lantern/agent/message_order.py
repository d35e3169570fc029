"""Where Lantern's own notes go in a request, so that every provider accepts the order.

Strict providers (Mistral, and templates that validate roles) reject a
`system` or `user` message directly after `tool` messages. So a note for one
request (the last-step or budget instruction, the empty-reply nudge) is not
a message of its own: it is merged into the last message of the request,
inside the last tool message after its data (marked as Lantern's, not the
tool's) or at the end of the user message before it. The note is for that
request only and never stored in the conversation. At the last step the
tools are still declared when the history holds tool calls (gateways to
Anthropic and Bedrock reject tool results without tool definitions), with
`tool_choice: "none"`; without earlier calls no tools are sent. Either way the
note is what tells the model to answer now, and calls a server returns anyway
at the last step are not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_IN_TOOL_OUTPUT = "\n\n--- [Lantern] note from Lantern, not part of the tool output above ---\n"


def with_notes(messages: list[dict[str, Any]], notes: Sequence[str]) -> list[dict[str, Any]]:
    """`messages` with `notes` merged into the last message (copied, never changed in place)."""
    if not notes:
        return messages
    text = " ".join(notes)
    last = messages[-1]
    content = last.get("content")
    body = content if isinstance(content, str) else ""
    if last.get("role") == "tool":
        return [*messages[:-1], {**last, "content": f"{body}{_IN_TOOL_OUTPUT}{text}"}]
    if last.get("role") == "user" and isinstance(content, str):
        return [*messages[:-1], {**last, "content": f"{body}\n\n[Lantern] {text}"}]
    return [*messages, {"role": "user", "content": f"[Lantern] {text}"}]
