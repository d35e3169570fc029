"""The composition root: the model client and the agent, put together in one place for
`lantern ask` (`cli/ask.py`) and `lantern serve` (`session.py`).

Both build the same objects from the same settings, so a question asked on the command
line and one asked in an editor run with the same client options, limits and audit log.
"""

from __future__ import annotations

from typing import Any

from lantern.agent.loop import Agent, Limits
from lantern.agent.provider.client import ModelClient
from lantern.agent.provider.endpoint import Endpoint
from lantern.approvals.approver import Approver
from lantern.audit import AuditLog
from lantern.settings.model import Settings
from lantern.workspace.roots import Workspace


def model_options(endpoint: Endpoint, settings: Settings) -> tuple[Any, ...]:
    """What makes one model client differ from another (a server keeps one per value)."""
    return (
        endpoint.model,
        endpoint.base_url,
        endpoint.api_key,
        settings.request_timeout_seconds,
        tuple(sorted(settings.headers.items())),
        settings.max_output_tokens,
    )


def model_client(endpoint: Endpoint, settings: Settings) -> ModelClient:
    """The client for the resolved endpoint, with the settings that shape its requests."""
    return ModelClient(
        model=endpoint.model,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        request_timeout=settings.request_timeout_seconds,
        headers=settings.headers,
        max_output_tokens=settings.max_output_tokens,
    )


def agent(
    model: ModelClient, workspace: Workspace, approvals: Approver, settings: Settings
) -> Agent:
    """An agent for one question: the settings' limits, the workspace's audit log."""
    return Agent(
        model=model,
        workspace=workspace,
        approvals=approvals,
        limits=Limits.from_settings(settings),
        audit=AuditLog(workspace=workspace.name, workspace_key=workspace.key),
        project_instructions=settings.project_instructions,
    )
