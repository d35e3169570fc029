"""`lantern doctor`: resolved settings (key masked), endpoint reachable?, ripgrep found?
On native Windows it also says that Lantern's tools do not run there (and fails).

`--probe` adds one real, tiny tool-call round trip against the configured model
(a fixed dummy `get_time` tool; nothing from any workspace is sent) and says
what the endpoint does: tools or not (so which protocol `toolProtocol = "auto"`
ends up using), parallel calls, reasoning fields, usage in the stream, and
whether `stream_options` is accepted; after a round trip that worked, the
context window once more, set against what Lantern's system prompt and tools
take (`doctor_window`). A failed round trip, or a window no question fits in,
exits non-zero with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import urllib.error
from dataclasses import dataclass, field
from typing import Any

from lantern import exit_codes
from lantern.agent.failure import EndpointError, ModelError
from lantern.agent.protocol.markup import has_markup
from lantern.agent.provider.client import ModelClient
from lantern.agent.provider.endpoint import list_models, ollama_base_url, resolve_endpoint
from lantern.agent.provider.secrets_out import ScrubbingWriter, Secrets
from lantern.agent.reply import ChatTurn, Reply, ToolCall
from lantern.approvals.approver import grants_path
from lantern.audit import audit_path
from lantern.cli.doctor_address import check_address
from lantern.cli.doctor_window import check_window, window_line
from lantern.errors import ToolError
from lantern.escaping import public_url
from lantern.platform_gate import unsupported
from lantern.settings.sources import Settings, config_path
from lantern.tools.ripgrep.process import rg_binary
from lantern.workspace.jail import readback_method


def run_doctor(settings: Settings, *, probe: bool = False) -> int:
    """Print the report, every line with the endpoint's credentials hidden (a server's
    answer may echo the key; a URL may hold a password)."""
    secrets = Secrets.of(
        api_key=settings.api_key, base_url=settings.base_url, headers=settings.headers
    )
    out = ScrubbingWriter(sys.stdout, secrets)
    try:
        with contextlib.redirect_stdout(out):
            return _report(settings, probe=probe)
    finally:
        out.flush()


def _report(settings: Settings, *, probe: bool) -> int:
    ok = True
    # Doctor takes none of `ask`'s flags: what it shows is config.toml and the environment.
    print("Settings (config.toml < environment):")
    print("  " + json.dumps(settings.public_dict(), indent=2).replace("\n", "\n  "))
    path = config_path()
    print(f"Config file:  {path}{'' if path.exists() else ' (not present)'}")
    print(f"Audit log:    {audit_path()}")
    print(f"Approvals:    {grants_path()}")
    refusal = unsupported()
    if refusal is not None:
        print(f"Platform:     NOT SUPPORTED — {refusal}")
        ok = False
    print(f"Read-back:    {_readback_line()}")
    try:
        rg = rg_binary()
        version = subprocess.run(
            [rg, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.splitlines()[0]
        print(f"ripgrep:      {version} ({rg})")
    except (ToolError, OSError, IndexError, subprocess.SubprocessError):
        print("ripgrep:      NOT FOUND — reinstall lantern (the ripgrep wheel ships rg)")
        ok = False
    base_url = settings.base_url or (
        "https://api.openai.com/v1" if settings.api_key else ollama_base_url(os.environ)
    )
    shown_url = public_url(base_url)  # its query or userinfo may carry a key
    try:
        models = list_models(base_url, settings.api_key, headers=settings.headers)
        listed = ", ".join(models[:10]) + (" …" if len(models) > 10 else "")
        print(f"Endpoint:     {shown_url} reachable; models: {listed or '(none listed)'}")
        if settings.model and models and settings.model not in models:
            print(f"  warning: model {settings.model!r} is not in the endpoint's list")
    except (OSError, ValueError, urllib.error.URLError) as exc:
        print(f"Endpoint:     {shown_url} NOT reachable ({exc})")
        ok = False
    if not settings.model:
        print("Model:        not set (lantern ask will try Ollama, then explain how to set one)")
    print(f"Context window: {window_line(settings, os.environ)}")
    if probe and not asyncio.run(run_probe(settings)):
        ok = False
    return exit_codes.OK if ok else exit_codes.MODEL


def _readback_line() -> str:
    """How check 5 of the read path (where an opened file really is) works here."""
    method = readback_method()
    if method == "/proc":
        return "/proc/self/fd (check 5: where each opened file really is)"
    if method == "F_GETPATH":
        return "fcntl F_GETPATH (check 5: where each opened file really is)"
    if method == "walk":
        return (
            "a walk up '..' from each opened handle to its workspace folder (check 5: where "
            "each opened file really is; no /proc/self/fd, no F_GETPATH here)"
        )
    return (
        "UNAVAILABLE — check 5 cannot read back where an opened file is (no /proc/self/fd, "
        "no F_GETPATH); the no-follow open beneath each root still holds (docs/platforms.md)"
    )


# --------------------------------------------------------------------------- probe

PROBE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current time in one IANA time zone.",
        "parameters": {
            "type": "object",
            "properties": {"timezone": {"type": "string", "description": "e.g. UTC"}},
            "required": ["timezone"],
        },
    },
}
PROBE_MESSAGES: list[dict[str, Any]] = [
    {
        "role": "system",
        "content": "You check a connection. Use the get_time tool: when you need the time in "
        "several zones, call it for all of them at once, in one reply. After the results, "
        "answer in one short sentence.",
    },
    {"role": "user", "content": "What time is it now in UTC and in Europe/Paris?"},
]
_PROBE_TIMEOUT_S = 60.0
_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")


@dataclass
class ProbeFindings:
    tools: str = "unknown"  # native | text | unsupported | not_called
    calls: int = 0
    reasoning: list[str] = field(default_factory=list)
    call_fields: list[str] = field(default_factory=list)
    usage_in_stream: bool | None = None
    stream_options: bool | None = None
    answer: str = ""
    provider_words: str = ""


async def run_probe(settings: Settings) -> bool:
    """One tool-call round trip, then the window; print what was seen. False when the round
    trip failed or no question fits the window."""
    try:
        endpoint = resolve_endpoint(settings, os.environ)
    except EndpointError as exc:
        # This text shows whole `lantern ask …` command lines: its flags belong there.
        print("Probe:        not run — " + exc.cli.replace("\n", "\n  "))
        return False
    print(
        f"Probe:        one get_time round trip with model {endpoint.model!r} "
        f"at {public_url(endpoint.base_url or 'https://api.openai.com/v1')} (no workspace content)"
    )
    base_url = endpoint.base_url or "https://api.openai.com/v1"
    address = await check_address(base_url, endpoint.model, endpoint.api_key, settings.headers)
    print("\n".join(address.lines))
    client = ModelClient(
        model=endpoint.model,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        request_timeout=min(settings.request_timeout_seconds, _PROBE_TIMEOUT_S),
        max_retries=0,
        headers=settings.headers,
        max_output_tokens=settings.max_output_tokens,
    )
    found = ProbeFindings()
    try:
        await _round_trip(client, found)
    except ModelError as exc:
        print(f"  FAILED:         {exc.headline}")
        for fix in exc.fixes:  # in settings' words: doctor takes none of ask's flags
            print(f"    fix:          {fix.editor_text()}")
        return False
    finally:
        found.stream_options = client.stream_options_accepted
        await client.close()
    _print_findings(found, settings.tool_protocol)
    # After the round trip: a server that loads models on demand has loaded this one.
    lines, fits = await check_window(endpoint, settings, os.environ)
    print("\n".join(lines))
    return fits and (found.tools != "unsupported" or settings.tool_protocol != "native")


async def _round_trip(client: ModelClient, found: ProbeFindings) -> None:
    messages = list(PROBE_MESSAGES)
    try:
        reply = await client.complete(ChatTurn(messages, [PROBE_TOOL]))
    except ModelError as exc:
        if exc.kind != "tools_unsupported":
            raise
        found.tools, found.provider_words = "unsupported", exc.headline
        # The text protocol needs only plain chat: check that much works.
        reply = await client.complete(ChatTurn(messages))
        _note(found, reply)
        found.answer = reply.content.strip()
        return
    _note(found, reply)
    if not reply.tool_calls:
        found.tools = "text" if has_markup(reply.content) else "not_called"
        found.answer = reply.content.strip()
        return
    found.tools, found.calls = "native", len(reply.tool_calls)
    messages.append(
        {
            "role": "assistant",
            "content": reply.content or None,
            **reply.extra,
            "tool_calls": [
                {
                    **call.extra,
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in reply.tool_calls
            ],
        }
    )
    for call in reply.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": _fake_time(call)})
    final = await client.complete(ChatTurn(messages, [PROBE_TOOL]))
    _note(found, final)
    found.answer = final.content.strip() or "(no text; it called the tool again)"


def _note(found: ProbeFindings, reply: Reply) -> None:
    for name in _REASONING_FIELDS:
        if name in reply.extra and name not in found.reasoning:
            found.reasoning.append(name)
    if reply.reasoning and not found.reasoning:
        found.reasoning.append("<think> in the text")
    for call in reply.tool_calls:
        for name in call.extra:
            if name not in found.call_fields:
                found.call_fields.append(name)
    if reply.usage is not None:
        sent = not reply.usage.estimated
        found.usage_in_stream = sent if found.usage_in_stream is None else found.usage_in_stream
        found.usage_in_stream = found.usage_in_stream and sent


def _fake_time(call: ToolCall) -> str:
    try:
        zone = json.loads(call.arguments).get("timezone", "UTC")
    except (ValueError, AttributeError):
        zone = "UTC"
    return f"12:00 in {str(zone)[:40]}"


def _print_findings(found: ProbeFindings, protocol: str) -> None:
    tools = {
        "native": f"supported ({found.calls} call{'s' if found.calls != 1 else ''} to get_time)"
        " → toolProtocol auto uses native tool calls",
        "text": "the model wrote its call as text (<tool_call>/[TOOL_CALLS]) → toolProtocol "
        "auto switches to the text tool protocol",
        "not_called": "accepted, but the model answered without calling the tool → auto "
        "keeps native tool calls; a model trained for tool use will do better",
        "unsupported": f"NOT supported: {found.provider_words} → toolProtocol "
        "auto uses the text tool protocol",
    }[found.tools]
    print(f"  tools:          {tools}")
    if found.tools == "unsupported" and protocol == "native":
        print("  FAILED:         toolProtocol is 'native'; set it to 'auto' or 'text'")
    if found.tools == "native":
        parallel = "yes" if found.calls > 1 else "no (one call per reply)"
        print(f"  parallel calls: {parallel}")
    reasoning = ", ".join(found.reasoning) or "none seen"
    print(f"  reasoning:      {reasoning}")
    if found.call_fields:
        print(f"  call fields:    {', '.join(found.call_fields)} (sent back verbatim)")
    usage = {True: "sent in the stream", False: "not sent (Lantern estimates it)", None: "?"}
    print(f"  usage:          {usage[found.usage_in_stream]}")
    accepted = {True: "accepted", False: "rejected (Lantern asks without it)", None: "?"}
    print(f"  stream_options: {accepted[found.stream_options]}")
    answer = found.answer.replace("\n", " ")
    print(f"  answer:         {answer[:120] + ('…' if len(answer) > 120 else '') or '(empty)'}")
