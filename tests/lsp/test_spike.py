import time
from tests.lsp.conftest import *  # noqa

async def test_spike(start_server, fake, workspace):
    fake.add_turns([
        {"content": "Let me look.", "tool_calls": [read_call("call_1", "src/app.py")]},
        {"content": "It is in src/app.py:2-3 and done."},
    ])
    t=time.monotonic()
    ls = await start_server([workspace])
    print("init", time.monotonic()-t)
    result = await ls.ask("Where?")
    print("ask", time.monotonic()-t)
    fake.add_turns([{"content": "again"}])
    result = await ls.ask("Where?")
    print("ask2", time.monotonic()-t)
