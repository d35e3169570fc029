"""A prompt for approval tests: it answers from a script and records what it was asked."""

from __future__ import annotations

import asyncio

from lantern.approvals.approver import ApprovalRequest, Decision


class Recorder:
    """Answers `answers` in turn (the last one from then on; Allow Once when none is given)
    and records every request it was asked, optionally after `delay` seconds."""

    def __init__(self, *answers: Decision, delay: float = 0.0) -> None:
        self.answers = list(answers) or [Decision.ALLOW_ONCE]
        self.delay = delay
        self.requests: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        return self.answers[min(len(self.requests), len(self.answers)) - 1]

    @property
    def asked(self) -> int:
        return len(self.requests)

    @property
    def paths(self) -> list[str]:
        """The path each request named, in the order asked."""
        return [request.path for request in self.requests]

    @property
    def answer(self) -> Decision:
        """What it answers next; set it to answer that from now on."""
        return self.answers[min(len(self.requests), len(self.answers) - 1)]

    @answer.setter
    def answer(self, value: Decision) -> None:
        self.answers = [value]
