"""Finish reasons that are outcomes: an answer the provider filtered or cut off.

A reply that ends with `finish_reason: "content_filter"` (Azure OpenAI, OpenAI)
or `"length"` is not a whole answer, whatever it says. The question stops with
`filtered` or `truncated`, what was received is shown, and this says why and
what to change.
"""

from __future__ import annotations

from lantern.agent.failure import Fix, ModelError
from lantern.agent.provider.classify import Server, context_fixes

_FILTER_NOTE = (
    "ask differently, or have the provider's content filter reviewed (Azure: the deployment's "
    "content filter configuration)"
)


def cut_short(
    finish_reason: str, *, max_output_tokens: int | None = None, server: Server = "other"
) -> ModelError:
    """Why a reply with this finish reason is not a whole answer, and how to get one."""
    if finish_reason == "content_filter":
        return ModelError(
            "filtered",
            "the provider's content filter stopped the answer (finish_reason content_filter); "
            "what arrived before it is shown",
            fixes=(Fix(note=_FILTER_NOTE),),
        )
    if max_output_tokens is not None:
        raise_it = Fix(
            "maxOutputTokens", max_output_tokens * 2, note=f"it is {max_output_tokens:,} now"
        )
    else:
        raise_it = Fix("maxOutputTokens", note="the server's own output limit ended the answer")
    window = [f for f in context_fixes(server, truncated_prompt=True) if f.setting is None]
    return ModelError(
        "truncated",
        "the answer was cut off: the model reached its output limit (finish_reason length); "
        "what arrived is shown",
        fixes=(raise_it, *window),
    )


def too_large(limit_bytes: int) -> ModelError:
    """A reply that passed Lantern's own cap on one reply (`stream.MAX_REPLY_BYTES`): cut
    off there like one that reached an output limit (`truncated`)."""
    return ModelError(
        "truncated",
        f"the model's reply passed Lantern's limit of {limit_bytes >> 20} MiB for one reply "
        "(text, reasoning and tool-call arguments together) and was stopped there; "
        "what arrived is shown",
        fixes=(
            Fix(note="ask again, more narrowly: the model may have been repeating itself"),
            Fix("maxOutputTokens", note="a limit the server enforces ends such a reply sooner"),
        ),
        retryable=False,
    )
