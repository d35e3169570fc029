"""`safe_frame`: outgoing JSON-RPC frames never carry a lone-surrogate escape."""

from __future__ import annotations

import json

from lantern.lsp.wire import safe_frame


def frame(message: object) -> bytes:
    body = json.dumps(message).encode("ascii")
    return (
        b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n" % len(body) + body
    )


def parse(data: bytes) -> tuple[int, bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.split(b"\r\n")[0].split(b":")[1])
    return length, body


def test_lone_surrogates_in_keys_and_values_become_replacement_characters() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"a\ud800": ["x\udfffy", "ok"]}}
    out = safe_frame(frame(message))
    length, body = parse(out)
    assert length == len(body)
    assert b"\\ud8" not in body.lower() and b"\\udf" not in body.lower()
    assert json.loads(body)["result"] == {"a\ufffd": ["x\ufffdy", "ok"]}
    assert b"Content-Type: application/vscode-jsonrpc" in out


def test_valid_pairs_and_plain_frames_pass_untouched() -> None:
    for message in (
        {"jsonrpc": "2.0", "method": "lantern/event", "params": {"text": "😀 ok"}},
        {"jsonrpc": "2.0", "id": 2, "result": {"answer": "plain \\ud800 text, escaped"}},
    ):
        data = frame(message)
        assert safe_frame(data) == data


def test_a_surrogate_pair_split_by_an_escaped_backslash_is_still_lone() -> None:
    # The text `\` followed by a lone surrogate: the escape is real, not a literal.
    data = frame({"jsonrpc": "2.0", "id": 3, "result": "\\\ud83d"})
    length, body = parse(safe_frame(data))
    assert length == len(body)
    assert json.loads(body)["result"] == "\\\ufffd"
