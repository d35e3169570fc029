"""Error bodies as servers really write them: the user reads the provider's own words.

Sources: vLLM `entrypoints/openai/protocol.py` `ErrorResponse` (`{"object": "error",
"message", "type", "param", "code"}` at the top level) and its context-length
message; the Mistral API's message-order error (`invalid_request_message_order`,
code "3230"); Gemini's array of Google error objects; a proxy answering plain
text; a JSON string body; a pydantic-style validation error whose
`error.message` is an object. None of these is worth sending again.
"""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Lantern
from tests.dialects import replay
from tests.fakes.openai_server import FakeOpenAI, Turn

CASES = [
    pytest.param(
        400,
        json.dumps(
            {
                "object": "error",
                "message": "This model's maximum context length is 32768 tokens. However, you "
                "requested 40123 tokens in the messages. Please reduce the length of the messages.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        ),
        "maximum context length is 32768 tokens",
        id="vllm-context-length",
    ),
    pytest.param(
        400,
        '{"object":"error","message":"Unexpected role \'system\' after role \'tool\'",'
        '"type":"invalid_request_message_order","param":null,"code":"3230"}',
        "Unexpected role 'system' after role 'tool'",
        id="mistral-message-order",
    ),
    pytest.param(
        403,
        '[{"error": {"code": 403, "message": "Generative Language API has not been used in '
        'project 123 before or it is disabled.", "status": "PERMISSION_DENIED"}}]',
        "Generative Language API has not been used",
        id="gemini-array",
    ),
    pytest.param(
        400,
        "upstream rejected the request: unknown model 'gpt-9'",
        "unknown model 'gpt-9'",
        id="plain-text",
    ),
    pytest.param(
        404, '"model \\"llama9\\" not found"', 'model "llama9" not found', id="json-string"
    ),
    pytest.param(
        400,
        '{"error":{"message":{"detail":[{"loc":["body","messages",2,"content"],'
        '"msg":"Input should be a valid string"}]},"code":"invalid_request"}}',
        "Input should be a valid string",
        id="object-message",
    ),
]


@pytest.mark.parametrize(("status", "body", "words"), CASES)
def test_error_body_words_reach_the_user_once(
    fake: FakeOpenAI, lantern: Lantern, status: int, body: str, words: str
) -> None:
    content_type = "text/plain; charset=utf-8" if not body.startswith(("{", "[", '"')) else None
    fake.add_turns([Turn(raw=body, raw_status=status, raw_content_type=content_type)])
    run = lantern.ask(replay.QUESTION)
    replay.assert_error_once(run, words)
    assert len(fake.chat_requests()) == 1
