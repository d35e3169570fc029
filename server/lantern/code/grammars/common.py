"""What every language's table is made of, and the helpers they share.

A table is a list of rules, each one tree-sitter query pattern and a function that reads
its captures. Context (a decorator around a def, a declaration at module level) comes
from the pattern itself, never from `Node.parent`: tree-sitter finds a parent by walking
down from the root, so asking it per definition would be quadratic in a deep file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tree_sitter import Node

COMMENTS = frozenset({"comment", "line_comment", "block_comment"})

Captures = Mapping[str, Node]


@dataclass(frozen=True)
class Found:
    """One definition (or unlisted scope, such as a Rust `impl`) a rule recognised.

    `node` spans the whole definition; `name_node` is the token that names it (its start
    marks the definition's own use in `uses`); `name` is the name shown, which may carry
    its own qualifier (`Type.Method` from a Go receiver, `A.f` from C++ `A::f`).
    `header_end` is the byte where the header shown as the signature ends (None: the
    whole node). `listed=False` is a scope whose members are named under it but that is
    not itself a definition. When two rules find the same name token, the one with the
    wider node wins (a decorated def over the bare def). `tail`: the node that follows
    `node` and ends the definition, where the grammar split one definition in two (a
    body after a macro it read as a function); what rules find for `tail` itself is
    dropped.
    """

    node: Node
    name_node: Node
    name: str
    kind: str
    header_end: int | None = None
    listed: bool = True
    tail: Node | None = None

    @property
    def start(self) -> int:
        return self.node.start_byte

    @property
    def end(self) -> int:
        return (self.node if self.tail is None else self.tail).end_byte


Describe = Callable[[Captures, bytes], Sequence[Found]]


@dataclass(frozen=True)
class Rule:
    """A query pattern (its definition captured as `@d`) and what it defines."""

    pattern: str
    describe: Describe


@dataclass(frozen=True)
class Grammar:
    """A language's rules, and which node types are identifier tokens (for `uses`; a
    type the grammar does not have is left out). `prepare`: what the parser is given
    instead of a file's bytes, the same length, every byte at its place (None: the
    bytes themselves); every text shown is still taken from the file's own bytes."""

    rules: tuple[Rule, ...]
    identifiers: frozenset[str]
    prepare: Callable[[bytes], bytes] | None = None


def text(node: Node | None, source: bytes) -> str:
    """A node's source text (empty for None)."""
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def field(node: Node | None, name: str) -> Node | None:
    """The child in field `name`, or None."""
    return None if node is None else node.child_by_field_name(name)


def header_end(owner: Node | None, body: Node | None) -> int | None:
    """Where a header ends: the start of `owner`'s `body`, less any comments just before
    it (`def f():  # note` ends at the colon). None when there is no body."""
    if owner is None or body is None:
        return None
    end = body.start_byte
    for child in reversed(owner.children):
        if child.start_byte >= body.start_byte:
            continue
        if child.type not in COMMENTS:
            break
        end = child.start_byte
    return end


def body_end(owner: Node | None, body_field: str = "body") -> int | None:
    """`header_end` for `owner`'s child in `body_field`."""
    return header_end(owner, field(owner, body_field))


def named(
    node: Node | None,
    name_node: Node | None,
    kind: str,
    source: bytes,
    header: int | None = None,
) -> list[Found]:
    """One `Found` for `node` named by `name_node`'s text, or none when it has no name."""
    if node is None or name_node is None:
        return []
    name = text(name_node, source)
    if not name:
        return []
    return [Found(node, name_node, name, kind, header)]


def simple(kind: str, body_field: str = "body", name_field: str = "name") -> Describe:
    """A rule's reader for a node whose name and body are in the usual fields."""

    def describe(captures: Captures, source: bytes) -> list[Found]:
        node = captures["d"]
        return named(node, field(node, name_field), kind, source, body_end(node, body_field))

    return describe


def first_named(node: Node | None, node_type: str) -> Node | None:
    """`node` itself or its first-named-child chain's first node of `node_type`."""
    while node is not None and node.type != node_type:
        children = node.named_children
        node = children[0] if children else None
    return node
