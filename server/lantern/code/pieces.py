"""The parts of a tree to run a query on, avoiding huge syntax-error nodes.

tree-sitter's query cursor slows down with the square of an ERROR node's child count (a
file of 100,000 unclosed `[` takes minutes). Such a node is left out of the query:
its children are queried one by one (its leaves looked at directly), and so are the
children of every node around it. The nodes on the way down to it are themselves not
matched; a file without such an error is queried whole.
"""

from __future__ import annotations

from tree_sitter import Node, Tree

HUGE = 1_000  # an ERROR node with more children than this is not queried as one


def _bad_ids(root: Node) -> set[int]:
    """The ids of the huge ERROR nodes and of every node above one."""
    bad: set[int] = set()
    parents: dict[int, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error and node.child_count > HUGE:
            at: int | None = node.id
            while at is not None and at not in bad:
                bad.add(at)
                at = parents.get(at)
        for child in node.children:
            if child.has_error:
                parents[child.id] = node.id
                stack.append(child)
    return bad


def pieces(tree: Tree) -> tuple[list[Node], list[Node]]:
    """(subtrees to query whole, leaves to look at one by one)."""
    root = tree.root_node
    if not root.has_error:
        return [root], []
    bad = _bad_ids(root)
    if not bad:
        return [root], []
    whole: list[Node] = []
    leaves: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.id not in bad:
            whole.append(node)
            continue
        for child in node.children:
            if child.child_count == 0:
                leaves.append(child)
            else:
                stack.append(child)
    return whole, leaves
