"""How deep a query looks into a tree, and where a tree goes deeper than that.

tree-sitter's query cursor keeps depths in 16 bits: in a tree deeper than 65,535 levels
(a 100,000-deep generic type, 40,000 nested functions) one query takes tens of seconds
and silently misses the deepest nodes. Every query of the code engine starts its
matches at most MAX_DEPTH levels below the node it is run on (`cursor`); `beyond` finds
the first code deeper than that, so that what was not searched can be said. Real code
nests a few dozen levels.
"""

from __future__ import annotations

from collections.abc import Iterable

from tree_sitter import Node, Query, QueryCursor

MAX_DEPTH = 10_000


def cursor(query: Query) -> QueryCursor:
    """A cursor for `query` that starts no match deeper than MAX_DEPTH levels."""
    found = QueryCursor(query)
    found.set_max_start_depth(MAX_DEPTH)
    return found


def beyond(node: Node) -> int | None:
    """The first byte of a node more than MAX_DEPTH levels below `node` (which a `cursor`
    run on `node` does not reach), or None. A subtree with too few nodes to reach that
    deep is never walked (its node count says so), nor are the children of a node whose
    largest child cannot have enough (a flat table of 100,000 numbers), so a shallow tree
    costs a look at the children of its few largest nodes."""
    walk = node.walk()
    depth = 0
    enter = True
    while True:
        here = walk.node
        # A chain from here to below the limit holds MAX_DEPTH + 2 - depth nodes; a child
        # holds at most the node's count less itself and one for each other child.
        need = MAX_DEPTH + 2 - depth
        big = here is not None and here.descendant_count - here.child_count >= need - 1
        if enter and big and walk.goto_first_child():
            depth += 1
            if depth > MAX_DEPTH:
                below = walk.node
                return None if below is None else below.start_byte
            continue
        if walk.goto_next_sibling():
            enter = True
            continue
        if depth == 0 or not walk.goto_parent():
            return None
        depth -= 1
        enter = False


def first_beyond(nodes: Iterable[Node]) -> int | None:
    """The first byte beyond MAX_DEPTH under any of `nodes` (each queried on its own)."""
    found = [b for n in nodes if n.descendant_count > MAX_DEPTH and (b := beyond(n)) is not None]
    return min(found, default=None)
