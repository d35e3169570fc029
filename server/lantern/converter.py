"""The one converter: Lantern's dataclasses to JSON values, by the rule in `lantern.shapes`.

A dataclass is written as its fields in the order declared, each under its
camelCase name, left out, replaced or flattened as its metadata says
(`shapes.py`). `register` adds that writer to a cattrs converter as an unstructure
hook factory: the language server registers it on pygls's converter (lsprotocol's
hooks; `lsp/messages.converter`), so a handler returns a typed value and pygls
writes it. `to_json` runs the same writer without cattrs, for `lantern ask --json`,
which prints the very shape of the `lantern/ask` result and loads neither
lsprotocol nor cattrs to do it. `sent_fields` is the same plan as data: what a
type sends and which of it may be absent (`tests/unit/test_protocol_drift.py`
holds it against `vscode-extension/src/protocol.ts`).

Each field's value is written by its runtime type (a dataclass again by this
writer, a list item by item), so a type annotation may name a class that is only
imported for type checking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from lantern.shapes import KEY, PLAIN, Wire, camel

if TYPE_CHECKING:
    import cattrs

Write = Callable[[Any], Any]


class Sent(NamedTuple):
    """One field as the wire has it."""

    name: str  # the attribute
    key: str  # its camelCase name
    wire: Wire
    default: Any  # what `optional` compares with (`dataclasses.MISSING`: none)


def _plan(cls: type) -> list[Sent]:
    plan = []
    for field in dataclasses.fields(cls):
        spec: Wire = field.metadata.get(KEY, PLAIN)
        if not spec.sent:
            continue
        default = field.default
        if field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        plan.append(Sent(field.name, camel(field.name), spec, default))
    return plan


def sent_fields(cls: type) -> dict[str, bool]:
    """What `cls` sends: each camelCase name → whether it may be absent (`optional`).
    An inlined field is not listed: its value's own type says what it adds."""
    return {s.key: s.wire.optional for s in _plan(cls) if not s.wire.inline}


def _writer(cls: type, write: Write) -> Callable[[Any], dict[str, Any]]:
    """The writer of one dataclass; `write` writes each field's value."""
    plan = _plan(cls)

    def write_fields(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, key, spec, default in plan:
            item = getattr(value, name)
            if spec.optional and item == default:
                continue
            if spec.inline:
                out.update(write(item))
                continue
            out[key] = write(spec.sent_as(item) if spec.sent_as else item)
        return out

    return write_fields


def _is_dataclass(cls: Any) -> bool:
    return isinstance(cls, type) and dataclasses.is_dataclass(cls)


def register(converter: cattrs.Converter) -> cattrs.Converter:
    """Teach `converter` to write Lantern's dataclasses; returns it.

    A value held where the declared type is `Any` (pygls's response message holds the
    result so) is written by its runtime type, as cattrs 23.2 and later do by themselves;
    23.1, the lowest pygls allows, would leave it as it is for pygls to write its
    attributes raw."""
    converter.register_unstructure_hook_factory(
        _is_dataclass, lambda cls: _writer(cls, converter.unstructure)
    )
    converter.register_unstructure_hook_func(lambda kind: kind is Any, converter.unstructure)
    return converter


_WRITERS: dict[type, Callable[[Any], dict[str, Any]]] = {}  # `to_json`'s, one per class


def to_json(value: Any) -> Any:
    """`value` as JSON values (dicts, lists, strings, numbers), as the server sends it."""
    kind = type(value)
    if _is_dataclass(kind):
        writer = _WRITERS.get(kind)
        if writer is None:
            writer = _WRITERS[kind] = _writer(kind, to_json)
        return writer(value)
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    return value
