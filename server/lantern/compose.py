"""The composition root: the model client and the agent, put together in one place for
`lantern ask` (`cli/ask.py`) and `lantern serve` (`session.py`).

Both build the same objects from the same settings, so a question asked on the command
line and one asked in an editor run with the same client options, limits and audit log.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from lantern.agent.loop import Agent
from lantern.agent.provider.client import ModelClient
from lantern.agent.provider.endpoint import Endpoint
from lantern.agent.provider.window import ContextWindow
from lantern.approvals.approver import Approver
from lantern.audit import AuditLog
from lantern.settings.model import Settings
from lantern.workspace.roots import Workspace


@dataclass(frozen=True)
class ClientOptions:
    """Everything a model client is made from: two equal options make the same client
    (a server keeps one per value)."""

    model: str
    base_url: str | None
    api_key: str | None
    request_timeout: float
    headers: tuple[tuple[str, str], ...]
    max_output_tokens: int | None


def model_options(endpoint: Endpoint, settings: Settings) -> ClientOptions:
    """The client options for the resolved endpoint and the settings that shape requests."""
    return ClientOptions(
        model=endpoint.model,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        request_timeout=settings.request_timeout_seconds,
        headers=tuple(sorted(settings.headers.items())),
        max_output_tokens=settings.max_output_tokens,
    )


def model_client(endpoint: Endpoint, settings: Settings) -> ModelClient:
    """The client for the resolved endpoint, with the settings that shape its requests."""
    options = model_options(endpoint, settings)
    return ModelClient(**{**asdict(options), "headers": dict(options.headers)})


def agent(
    model: ModelClient,
    workspace: Workspace,
    approvals: Approver,
    settings: Settings,
    window: ContextWindow | None = None,
) -> Agent:
    """An agent for one question: the settings' limits, the workspace's audit log, and
    the endpoint's context window as found (`provider.window.context_window`)."""
    return Agent(
        model=model,
        workspace=workspace,
        approvals=approvals,
        settings=settings,
        audit=AuditLog(workspace=workspace.name, workspace_key=workspace.key),
        window=window,
    )
