"""The composition root: the model client and the agent, put together in one place for
`lantern ask` (`cli/ask.py`) and `lantern serve` (`session.py`).

Both build the same objects from the same settings, so a question asked on the command
line and one asked in an editor run with the same client options, limits and audit log.
`AgentSide` is what a server's session keeps of them between requests; the session loads
this module on first use (`session.load_agent_side`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from lantern.agent.conversation import Conversations
from lantern.agent.loop import Agent
from lantern.agent.provider.client import ModelClient
from lantern.agent.provider.endpoint import Endpoint, resolve_endpoint
from lantern.agent.provider.model_lists import (
    LocalServer,
    ModelList,
    endpoint_models,
    local_candidates,
    probe_local_servers,
)
from lantern.agent.provider.window import ContextWindow, context_window
from lantern.approvals.approver import Approver
from lantern.audit import AuditLog
from lantern.settings.model import Settings
from lantern.tools.navigator import Navigator
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
    navigator: Navigator | None = None,
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
        navigator=navigator,
    )


class AgentSide:
    """What a language server's session keeps of the agent side between requests: the
    conversations, and one model client per set of client options (`model_options`)."""

    def __init__(self) -> None:
        self.conversations = Conversations()
        self._clients: dict[ClientOptions, ModelClient] = {}

    def client(
        self, settings: Settings, environ: Mapping[str, str]
    ) -> tuple[Endpoint, ModelClient]:
        """The endpoint the settings resolve to, and its client; raises `EndpointError`."""
        endpoint = resolve_endpoint(settings, environ)
        key = model_options(endpoint, settings)
        if key not in self._clients:
            self._clients[key] = model_client(endpoint, settings)
        return endpoint, self._clients[key]

    async def agent(
        self,
        endpoint: Endpoint,
        model: ModelClient,
        workspace: Workspace,
        approvals: Approver,
        settings: Settings,
        environ: Mapping[str, str],
        navigator: Navigator | None = None,
    ) -> Agent:
        """An agent for one question, as `lantern ask` builds it (`agent` above), with the
        endpoint's context window (found once per endpoint and model, then remembered)."""
        window = await context_window(endpoint, settings, environ)
        return agent(model, workspace, approvals, settings, window, navigator)

    async def models(self, settings: Settings, environ: Mapping[str, str]) -> ModelList:
        return await endpoint_models(settings, environ)

    async def local_servers(self, environ: Mapping[str, str]) -> list[LocalServer]:
        return await probe_local_servers(local_candidates(environ))
