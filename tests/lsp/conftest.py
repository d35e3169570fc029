"""Shared harness for the language-server tests: the real `lantern serve` in a subprocess,
driven by pytest-lsp's `LanguageClient`, with the fake OpenAI server as the model.

Every server runs with HOME and the XDG folders in a temporary directory, the model
settings pointing at the fake (loopback only), and no inherited OPENAI_*/LANTERN_*/proxy
variables. `Lantern` records what the server sends (`lantern/event`, progress, prompts,
messages) and answers `window/showMessageRequest` as a test tells it to.

A server costs a process start, so the tests of a module that need no settings of their
own at `initialize` share one, as pygls's own suite does: `shared_server`, on
`module_workspace`, with `module_fake` as the model (both reset for each test by the
module's `ls` and `fake` fixtures). A test that needs its own settings at start, several
servers, or a restart still uses `start_server`. Async tests and fixtures here run in
their module's event loop (`pytestmark` in each module), which the shared server needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.fakes.openai_server import FakeOpenAI
from tests.hang import HANG_S

SERVER_COMMAND = [sys.executable, "-m", "lantern.cli", "serve"]
ASK = "lantern/ask"
RESET = "lantern/resetConversation"
EVENT = "lantern/event"
REQUEST_CANCELLED = -32800

ALLOW = "Allow"
ALLOW_CONVERSATION = "Allow in Chat"
ALLOW_WORKSPACE = "Always Allow"
DENY = "Deny"
ACTIONS = [DENY, ALLOW, ALLOW_CONVERSATION, ALLOW_WORKSPACE]  # the first never grants
#: An answer: the first action offered, as a client that pre-selects it sends on Enter (eglot).
ENTER = "<enter>"

#: How long any single wait in these tests may take before it is a hang (see tests/hang.py).
WAIT = HANG_S

_DROPPED_PREFIXES = ("OPENAI_", "LANTERN_", "XDG_", "OLLAMA_")
_DROPPED = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"}


def server_env(home: Path, base_url: str) -> dict[str, str]:
    """The environment for one server process: private HOME/XDG dirs, the fake model."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(_DROPPED_PREFIXES) and k.lower() not in _DROPPED
    }
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env.update(
        LANTERN_MODEL="fake-model",
        LANTERN_BASE_URL=base_url,
        OLLAMA_HOST="127.0.0.1:9",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
    )
    # The package is imported from the checkout (editable install or PYTHONPATH).
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(root) / "server"), root, env.get("PYTHONPATH", "")) if p
    )
    return env


def plain(value: Any) -> Any:
    """pytest-lsp's client (pygls) hands a method it has no type for over as nested
    namedtuples; this turns them back into JSON values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def read_call(call_id: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"id": call_id, "name": "read_file", "arguments": {"path": path, **extra}}


def all_text(request: Mapping[str, Any]) -> str:
    """Everything the model was sent in one chat request, as one string."""
    parts: list[str] = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


Answer = str | None | Callable[[str], Awaitable[str | None]]


class Lantern:
    """One `lantern serve` process and the pytest-lsp client talking to it."""

    def __init__(self, client: LanguageClient, env: Mapping[str, str]) -> None:
        self.client = client
        self.env = dict(env)
        self.events: list[dict[str, Any]] = []
        self.prompts: list[str] = []
        self.prompt_opened = asyncio.Event()
        #: What the client answers to the next prompts: an action title, None (dismiss)
        #: or an async function of the prompt message.
        self.answer: Answer = ALLOW
        #: The server's reply to `initialize`.
        self.initialized: types.InitializeResult | None = None
        #: How many times the server pulled `workspace/configuration` (answered at once).
        self.configuration_pulls = 0
        self._event_waiters: list[tuple[Callable[[dict[str, Any]], bool], asyncio.Event]] = []
        self._prompt_tasks: list[asyncio.Task[Any]] = []

        get_configuration = client.get_configuration

        def counted(*, section: str | None = None, scope_uri: str | None = None) -> Any:
            if scope_uri is None:  # each pull asks for the unscoped section first
                self.configuration_pulls += 1
            return get_configuration(section=section, scope_uri=scope_uri)

        client.get_configuration = counted  # type: ignore[method-assign]

        @client.feature(EVENT)
        def on_event(params: Any) -> None:
            event = plain(params)
            self.events.append(event)
            for predicate, flag in self._event_waiters:
                if predicate(event):
                    flag.set()

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def on_prompt(
            params: types.ShowMessageRequestParams,
        ) -> types.MessageActionItem | None:
            assert [a.title for a in params.actions or []] == ACTIONS
            assert params.type == types.MessageType.Info
            task = asyncio.current_task()
            if task is not None:
                self._prompt_tasks.append(task)
            self.prompts.append(params.message)
            self.prompt_opened.set()
            answer = self.answer
            if answer == ENTER:
                answer = (params.actions or [types.MessageActionItem(title="")])[0].title
            title = (
                answer
                if answer is None or isinstance(answer, str)
                else await answer(params.message)
            )
            return None if title is None else types.MessageActionItem(title=title)

    def clear(self) -> None:
        """Forget what earlier tests saw and said (a shared server starts each test so)."""
        self.events.clear()
        self.prompts.clear()
        self.prompt_opened.clear()
        self.answer = ALLOW
        self._prompt_tasks.clear()
        self.client.progress_reports.clear()
        self.client.messages.clear()

    # ------------------------------------------------------------------ lifecycle

    async def initialize(
        self,
        folders: Iterable[Path],
        options: Mapping[str, Any] | None = None,
        *,
        configuration: bool = True,
        position_encodings: list[str] | None = None,
        experimental: Any = None,
        work_done_progress: bool = True,
    ) -> None:
        """Initialize with these folders, options and client capabilities (`experimental`:
        what the client offers Lantern, e.g. `{"lantern": {"navigation": [...]}}`)."""
        general = (
            None
            if position_encodings is None
            else types.GeneralClientCapabilities(
                position_encodings=[types.PositionEncodingKind(e) for e in position_encodings]
            )
        )
        capabilities = types.ClientCapabilities(
            experimental=experimental,
            general=general,
            window=types.WindowClientCapabilities(
                work_done_progress=work_done_progress,
                show_message=types.ShowMessageRequestClientCapabilities(),
            ),
            workspace=types.WorkspaceClientCapabilities(
                configuration=configuration, workspace_folders=True
            ),
        )
        folder_list = [
            types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name) for folder in folders
        ]
        self.initialized = await asyncio.wait_for(
            self.client.initialize_session(
                types.InitializeParams(
                    capabilities=capabilities,
                    workspace_folders=folder_list,
                    initialization_options=dict(options) if options is not None else None,
                )
            ),
            WAIT,
        )

    async def close(self) -> None:
        """Shut the server down politely; kill it (our own process) if it does not go."""
        process = self.client._server
        with contextlib.suppress(Exception):
            if process is not None and process.returncode is None:
                await asyncio.wait_for(self.client.shutdown_session(), 5)
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.stop(), 5)

    # ------------------------------------------------------------------ requests

    async def request(self, method: str, params: Mapping[str, Any], msg_id: Any = None) -> Any:
        return plain(
            await asyncio.wait_for(
                self.client.protocol.send_request_async(method, dict(params), msg_id=msg_id),
                WAIT,
            )
        )

    async def ask(self, question: str, **params: Any) -> dict[str, Any]:
        result = await self.request(ASK, {"question": question, **params})
        assert isinstance(result, dict)
        return result

    def cancel(self, msg_id: Any) -> None:
        self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    async def wait_event(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first event (already received or still to come) that matches."""
        flag = asyncio.Event()
        self._event_waiters.append((predicate, flag))
        try:
            for event in self.events:
                if predicate(event):
                    return event
            await asyncio.wait_for(flag.wait(), WAIT)
            return next(e for e in self.events if predicate(e))
        finally:
            self._event_waiters.remove((predicate, flag))

    async def answers_sent(self) -> None:
        """Until every prompt so far has been answered and the answer written to the server.

        pygls sends a handler's result from a done-callback added before any waiter's, so
        once the handler tasks are done the answers are on the wire: a request sent after
        this reaches the server after them."""
        pending = [t for t in self._prompt_tasks if not t.done()]
        if pending:
            done, _ = await asyncio.wait(pending, timeout=WAIT)
            assert len(done) == len(pending), "a prompt is still unanswered"
        await asyncio.sleep(0)  # let the done-callbacks run (they are scheduled, not called)

    async def wait_configuration_pulls(self, count: int) -> None:
        """Until the server has pulled `workspace/configuration` `count` times in all."""
        async with asyncio.timeout(WAIT):
            while self.configuration_pulls < count:
                await asyncio.sleep(0.02)

    async def wait_prompt(self) -> str:
        await asyncio.wait_for(self.prompt_opened.wait(), WAIT)
        self.prompt_opened.clear()
        return self.prompts[-1]

    def events_of(self, request_id: Any = None, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events
            if (request_id is None or e.get("requestId") == request_id)
            and (kind is None or e.get("kind") == kind)
        ]

    def warnings(self) -> list[str]:
        return [m.message for m in self.client.messages]


StartServer = Callable[..., Awaitable[Lantern]]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def make_workspace(root: Path) -> Path:
    """A small project at `root`: src/app.py (12 lines), README.md, a .env with a secret."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "".join(f"line {n} of app\n" for n in range(1, 13)), "utf-8"
    )
    (root / "README.md").write_text("# proj\n", "utf-8")
    (root / ".env").write_text("ENV_SECRET_MARKER=zq81-Xy7!pQ\n", "utf-8")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj")


async def launch(
    home: Path,
    fake: FakeOpenAI,
    folders: Iterable[Path],
    options: Mapping[str, Any] | None = None,
    *,
    configuration: Mapping[str, Any] | None = None,
    answer: Answer = ALLOW,
    position_encodings: list[str] | None = None,
    started: list[Lantern] | None = None,
) -> Lantern:
    """Start `lantern serve` and initialize it; `started` collects it even if that fails."""
    env = server_env(home, fake.base_url)
    config = ClientServerConfig(server_command=SERVER_COMMAND, server_env=env)
    client = await config.start()
    assert isinstance(client, LanguageClient)
    if configuration is not None:
        client.set_configuration(dict(configuration), section="lantern")
    lantern = Lantern(client, env)
    lantern.answer = answer
    if started is not None:
        started.append(lantern)
    await lantern.initialize(folders, options, position_encodings=position_encodings)
    return lantern


@pytest_asyncio.fixture(loop_scope="module")
async def start_server(home: Path, fake: FakeOpenAI) -> AsyncIterator[StartServer]:
    """`await start_server(folders, options)` → an initialized `Lantern`; all are closed after."""
    started: list[Lantern] = []

    async def start(
        folders: Iterable[Path],
        options: Mapping[str, Any] | None = None,
        *,
        configuration: Mapping[str, Any] | None = None,
        answer: Answer = ALLOW,
        position_encodings: list[str] | None = None,
    ) -> Lantern:
        return await launch(
            home,
            fake,
            folders,
            options,
            configuration=configuration,
            answer=answer,
            position_encodings=position_encodings,
            started=started,
        )

    yield start
    for lantern in started:
        await lantern.close()


# ------------------------------------------------------------------ one server per module


@pytest.fixture(scope="module")
def module_fake() -> Iterator[FakeOpenAI]:
    """The fake model of a module's shared server (a module's `fake` resets it per test)."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def module_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `workspace` project, once per module: tests that change it use their own names."""
    return make_workspace(tmp_path_factory.mktemp("shared") / "proj")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_server(
    tmp_path_factory: pytest.TempPathFactory, module_fake: FakeOpenAI, module_workspace: Path
) -> AsyncIterator[Lantern]:
    """One server with default settings on `module_workspace`, for a whole module."""
    started: list[Lantern] = []
    try:
        yield await launch(
            tmp_path_factory.mktemp("home"), module_fake, [module_workspace], started=started
        )
    finally:
        for lantern in started:
            await lantern.close()
