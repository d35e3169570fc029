"""The import graph of `server/lantern` is the real one: no circle, and no import hidden in
a function except at the boundaries named here, each with its reason.

Read from the source with `ast`, every import counts: at module level, under
`if TYPE_CHECKING:` and inside functions. The language server loads the agent
side (the loop, the model client, openai) on first use through one function,
`session.load_agent_side`, so it answers `initialize` before that is imported
(`benchmarks/server_bench.py`); the command line loads each command's stack when
the command runs. Everything else is imported at the top of its module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "lantern"

#: (module, function) → (what it may import, why it imports it there).
LAZY: dict[tuple[str, str], tuple[set[str], str]] = {
    ("lantern.session", "load_agent_side"): (
        {"lantern.compose"},
        "the server's one boundary: the agent side loads on first use (or the warm-up "
        "thread), after `initialize` is answered",
    ),
    ("lantern.cli.commands", "main"): (
        {
            "lantern.cli.ask",
            "lantern.cli.doctor",
            "lantern.cli.tool",
            "lantern.cli.workspace",
            "lantern.lsp.server",
        },
        "the command line's dispatch: `lantern serve` loads no agent, `lantern ask` no pygls, "
        "only `lantern tool` loads the tools, `lantern --version` none of them",
    ),
    ("lantern.tools.registry", "_load"): (
        {
            "lantern.tools.find_references",
            "lantern.tools.find_symbol",
            "lantern.tools.list_files",
            "lantern.tools.outline",
            "lantern.tools.read_file",
            "lantern.tools.search",
        },
        "a tool's module loads when the tool is first asked for: `lantern tool read_file` "
        "loads no code engine",
    ),
    ("lantern.code.languages", "_loader"): (
        {
            "tree_sitter_c",
            "tree_sitter_cpp",
            "tree_sitter_go",
            "tree_sitter_java",
            "tree_sitter_javascript",
            "tree_sitter_python",
            "tree_sitter_rust",
            "tree_sitter_typescript",
        },
        "a grammar loads when a file in its language is first parsed, not all eight",
    ),
    ("lantern.settings.sources", "_suggest"): (
        {"difflib"},
        "standard library, needed only for a misspelt setting",
    ),
    ("lantern.workspace.jail", "_generation"): (
        {"fcntl"},
        "standard library, POSIX only: native Windows has none (and runs no tool)",
    ),
    ("lantern.workspace.jail", "handle_path"): ({"fcntl"}, "as `_generation`"),
    ("lantern.workspace.jail", "__init__"): ({"fcntl"}, "as `_generation`"),
    ("lantern.workspace.jail", "open"): (
        {"ctypes"},
        "standard library, only where openat2 is tried: it costs ~60 ms of start-up",
    ),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, ast.Module]:
    return {_module_name(p): ast.parse(p.read_text("utf-8")) for p in PACKAGE.rglob("*.py")}


def _imported(node: ast.Import | ast.ImportFrom, here: str, known: set[str]) -> list[str]:
    """The modules one import statement names (a `from m import name` names `m.name` when
    that is a module of the package, else `m`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: counted from this module's package
        package = here.split(".")[: -node.level]
        base = ".".join([*package, base] if base else package)
    found = []
    for alias in node.names:
        inner = f"{base}.{alias.name}"
        found.append(inner if inner in known else base)
    return found


_Found = tuple[ast.Import | ast.ImportFrom, str | None]


def _imports(tree: ast.Module) -> Iterator[_Found]:
    """Every import statement with the function it sits in (None: module level, including
    `if TYPE_CHECKING:` blocks)."""

    def walk(node: ast.AST, function: str | None) -> Iterator[_Found]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, function
            defines = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            yield from walk(child, child.name if defines else function)

    yield from walk(tree, None)


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, tree in modules.items():
        for node, _function in _imports(tree):
            graph[name] |= {m for m in _imported(node, name, known) if m in known and m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the modules around it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_the_package_has_no_import_circle() -> None:
    circle = _cycle(_graph())
    assert circle is None, "import circle: " + " → ".join(circle or [])


def test_the_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_imports_inside_functions_only_at_the_named_boundaries() -> None:
    modules = _modules()
    known = set(modules)
    hidden = []
    for name, tree in sorted(modules.items()):
        for node, function in _imports(tree):
            if function is None:
                continue
            allowed, _why = LAZY.get((name, function), (set(), ""))
            for module in _imported(node, name, known):
                if module not in allowed:
                    hidden.append(f"{name}.{function} imports {module}")
    assert not hidden, "move these to the top of their module, or through a boundary: " + (
        "; ".join(hidden)
    )


def test_every_boundary_named_is_still_there() -> None:
    """An entry whose lazy import went away goes from the list too."""
    modules = _modules()
    found = {(name, function) for name, tree in modules.items() for _, function in _imports(tree)}
    assert set(LAZY) <= found, sorted(set(LAZY) - found)
