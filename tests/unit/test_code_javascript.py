"""lantern.code on JavaScript: a fixture with every kind of definition it has."""

from __future__ import annotations

from pathlib import Path

from lantern.code.definitions import Definition, definitions

FIXTURES = Path(__file__).parent / "code_fixtures"


def _shapes() -> list[Definition]:
    return definitions((FIXTURES / "shapes.js").read_bytes(), "javascript")


def test_every_kind_with_its_qualified_name_and_lines() -> None:
    assert [(d.kind, d.name, d.start, d.end, d.depth) for d in _shapes()] == [
        ("constant", "API_URL", 4, 4, 0),
        ("constant", "RETRIES", 4, 4, 0),
        ("constant", "settings", 5, 5, 0),
        ("function", "handle", 8, 14, 0),
        ("function", "handle.inner", 10, 12, 1),
        ("function", "arrow", 16, 18, 0),
        ("function", "expression", 20, 22, 0),
        ("function", "generate", 24, 26, 0),
        ("class", "Widget", 28, 42, 0),
        ("method", "Widget.create", 29, 29, 1),
        ("method", "Widget.constructor", 33, 35, 1),
        ("method", "Widget.size", 37, 39, 1),
        ("method", "Widget.#hidden", 41, 41, 1),
        ("class", "default", 44, 46, 0),  # an anonymous default export
        ("method", "default.anonymous", 45, 45, 1),
        ("class", "Mixin", 48, 50, 0),
        ("method", "Mixin.apply", 49, 49, 1),
    ]


def test_signatures_are_the_header_on_one_line() -> None:
    signatures = {d.name: d.signature for d in _shapes()}
    assert signatures["handle"] == "function handle(request, { verbose } = {})"
    assert signatures["arrow"] == "const arrow = async (a, b) =>"
    assert signatures["expression"] == "const expression = function named(x)"
    assert signatures["Widget"] == "class Widget extends Base"
    assert signatures["Widget.create"] == "static create = (opts) =>"
    assert signatures["Widget.size"] == "get size()"
    assert signatures["API_URL"] == 'API_URL = "https://example.invalid"'
    assert signatures["settings"] == 'const settings = { mode: "fast", run() { return 1; } };'


def test_jsx_parses_as_javascript() -> None:
    source = b"export function App() {\n  return <div className='a'>{title}</div>;\n}\n"
    assert [(d.kind, d.name, d.start, d.end) for d in definitions(source, "javascript")] == [
        ("function", "App", 1, 3)
    ]
