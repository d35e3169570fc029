"""`lantern doctor --probe`, first part: is this the API's address, what does it hold?

The URL diagnosis `lantern ask` makes after a failure, made up front: whether
the base URL lists models (`GET …/models`), and if not, which fixed URL does
(`/v1` added, Ollama found at its root by `/api/tags`) and the models listed.
A few small GETs; nothing from any workspace. (The context window is checked after
the round trip, by `doctor_window`: a model is loaded by then.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lantern.agent.failure import shown
from lantern.agent.provider.diagnose import Prober, fixed_url, origin
from lantern.agent.provider.key_header import credentials
from lantern.escaping import escape_line, public_url

LABEL = "  {:<16}"


@dataclass
class Address:
    """What the address check found; `lines` are what doctor prints. `fine`: the base URL
    answers the API."""

    fine: bool = True
    lines: list[str] = field(default_factory=list)

    def say(self, label: str, text: str) -> None:
        self.lines.append(LABEL.format(label + ":" if label else "") + text)


async def check_address(
    base_url: str, model: str, api_key: str | None, headers: Mapping[str, str]
) -> Address:
    prober = Prober(*credentials(base_url, api_key, headers))
    found = Address()
    shown_url = public_url(base_url)  # its query or userinfo may carry a key
    models = await prober.models(base_url)
    tags = await prober.ollama_models(base_url)
    if models is not None:
        found.say("address", f"{shown_url} answers the API")
    else:
        fixed = fixed_url(base_url)
        answers = fixed if fixed and await prober.models(fixed) is not None else None
        if answers is None and tags is not None and origin(base_url) + "/v1" != base_url:
            answers = origin(base_url) + "/v1"
        found.fine = False
        if answers is not None:
            models = await prober.models(answers)
            found.say(
                "address",
                f"NOT the API: {shown_url} lists no models, {public_url(answers)} does → set "
                f"`baseUrl` to {public_url(answers, keep=('api-version',))}",
            )
        else:
            found.say("address", f"{shown_url} lists no models (GET …/models); see the round trip")
    listed = models if models is not None else tags
    if listed is not None:
        names = tuple(escape_line(m) for m in listed)
        found.say("models", shown(names) if names else "(none listed)")
        if model not in listed and listed:
            found.say("", f"{model!r} is not among them → set `model` to one of them")
    return found
