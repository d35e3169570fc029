"""lantern.code on TypeScript, TSX, Go, Rust, Java, C and C++: a fixture per language
with every kind of definition it has (tests/unit/code_fixtures/; for C++ also one behind
export and lock-annotation macros), and uses that never hit a comment, a string or a
character literal."""

from __future__ import annotations

from pathlib import Path

import pytest
from lantern.code.definitions import definitions
from lantern.code.references import uses

FIXTURES = Path(__file__).parent / "code_fixtures"

EXPECTED: dict[tuple[str, str], list[tuple[str, str, int, int, int]]] = {
    ("shapes.ts", "typescript"): [
        ("constant", "API_URL", 2, 2, 0),
        ("type", "Handler", 3, 3, 0),
        ("interface", "Shape", 5, 8, 0),
        ("method", "Shape.area", 6, 6, 1),
        ("enum", "Color", 10, 13, 0),
        ("class", "Base", 15, 24, 0),
        ("method", "Base.handler", 17, 17, 1),
        ("method", "Base.area", 19, 19, 1),
        ("method", "Base.name", 21, 23, 1),
        ("namespace", "Outer.Inner", 26, 29, 0),
        ("constant", "Outer.Inner.DEPTH", 27, 27, 1),
        ("function", "Outer.Inner.helper", 28, 28, 1),
        ("module", "virtual", 31, 33, 0),
        ("function", "virtual.load", 32, 32, 1),
        ("function", "overloaded", 35, 35, 0),
        ("function", "overloaded", 36, 36, 0),
        ("function", "overloaded", 37, 39, 0),
        ("function", "compute", 41, 41, 0),
    ],
    ("shapes.tsx", "tsx"): [
        ("interface", "Props", 4, 6, 0),
        ("function", "Card", 8, 10, 0),
        ("function", "App", 12, 14, 0),
    ],
    ("shapes.go", "go"): [
        ("constant", "MaxSize", 6, 6, 0),
        ("constant", "ModeFast", 9, 9, 0),
        ("constant", "ModeSlow", 10, 10, 0),
        ("struct", "Point", 13, 15, 0),
        ("interface", "Shape", 17, 20, 0),
        ("method", "Shape.Area", 18, 18, 1),
        ("type", "ID", 23, 23, 0),
        ("type", "Alias", 24, 24, 0),
        ("struct", "Box", 27, 29, 0),
        ("function", "New", 31, 34, 0),
        ("method", "Point.Area", 36, 38, 0),
        ("method", "Box.Len", 40, 42, 0),
    ],
    ("shapes.rs", "rust"): [
        ("constant", "MAX", 2, 2, 0),
        ("constant", "GREETING", 3, 3, 0),
        ("type", "Result", 5, 5, 0),
        ("struct", "Point", 7, 9, 0),
        ("struct", "Unit", 11, 11, 0),
        ("enum", "Shape", 13, 16, 0),
        ("trait", "Area", 18, 23, 0),
        ("method", "Area.area", 19, 19, 1),
        ("method", "Area.describe", 20, 22, 1),
        ("constant", "Point.ORIGIN", 26, 26, 1),
        ("method", "Point.new", 28, 31, 1),
        ("method", "Shape.area", 35, 37, 1),
        ("module", "geometry", 40, 44, 0),
        ("function", "geometry.distance", 41, 43, 1),
        ("function", "free", 46, 48, 0),
    ],
    ("Shapes.java", "java"): [
        ("class", "Shapes", 4, 26, 0),
        ("constant", "Shapes.MAX", 6, 6, 1),
        ("constant", "Shapes.MIN", 6, 6, 1),
        ("method", "Shapes.Shapes", 10, 10, 1),
        ("method", "Shapes.area", 12, 15, 1),
        ("class", "Shapes.Inner", 17, 19, 1),
        ("method", "Shapes.Inner.deep", 18, 18, 2),
        ("enum", "Shapes.Color", 21, 25, 1),
        ("method", "Shapes.Color.paint", 24, 24, 2),
        ("interface", "Shape", 28, 32, 0),
        ("constant", "Shape.SIDES", 29, 29, 1),
        ("method", "Shape.area", 31, 31, 1),
        ("class", "Point", 34, 34, 0),
        ("interface", "Tag", 36, 38, 0),
        ("method", "Tag.value", 37, 37, 1),
    ],
    ("shapes.c", "c"): [
        ("constant", "MAX_SIZE", 4, 4, 0),
        ("macro", "SQUARE", 5, 5, 0),
        ("constant", "LIMIT", 7, 7, 0),
        ("struct", "point", 11, 14, 0),
        ("type", "anon_t", 18, 20, 0),
        ("type", "callback_t", 22, 22, 0),
        ("struct", "value", 24, 27, 0),
        ("enum", "color", 29, 29, 0),
        ("function", "make", 33, 37, 0),
    ],
    ("shapes.cpp", "cpp"): [
        ("constant", "VERSION", 2, 2, 0),
        ("namespace", "geo.shapes", 4, 28, 0),
        ("constant", "geo.shapes.kSides", 6, 6, 1),
        ("class", "geo.shapes.Box", 8, 18, 1),
        ("method", "geo.shapes.Box.Box", 11, 11, 2),
        ("method", "geo.shapes.Box.~Box", 12, 12, 2),
        ("method", "geo.shapes.Box.get", 13, 13, 2),
        ("method", "geo.shapes.Box.run", 14, 14, 2),
        ("struct", "geo.shapes.Point", 20, 22, 1),
        ("enum", "geo.shapes.Mode", 24, 24, 1),
        ("type", "geo.shapes.Alias", 26, 26, 1),
        ("method", "geo.shapes.Box.Box", 30, 31, 0),
        ("method", "geo.shapes.Box.run", 33, 33, 0),
        ("function", "main", 35, 37, 0),
    ],
    ("annotated.cpp", "cpp"): [
        ("namespace", "lamp", 4, 51, 0),
        ("namespace", "lamp.detail", 5, 50, 1),
        ("class", "lamp.detail.Registry", 7, 15, 2),
        ("method", "lamp.detail.Registry.Forget", 9, 9, 3),
        ("method", "lamp.detail.Registry.Sweep", 10, 10, 3),
        ("method", "lamp.detail.Registry.Oldest", 11, 11, 3),
        ("method", "lamp.detail.Registry.Newest", 12, 12, 3),
        ("method", "lamp.detail.Registry.Lock", 13, 13, 3),
        ("method", "lamp.detail.Registry.TryLock", 14, 14, 3),
        ("method", "lamp.detail.Registry.Forget", 18, 22, 2),
        ("method", "lamp.detail.Registry.IsEmpty", 24, 26, 2),
        ("function", "lamp.detail.GetReporter", 29, 32, 2),
        ("function", "lamp.detail.GetTable", 34, 37, 2),
        ("function", "lamp.detail.JoinNames", 39, 41, 2),
        ("function", "lamp.detail.MakeWidget", 43, 43, 2),
        ("function", "lamp.detail.DefaultOptions", 45, 48, 2),
    ],
}


@pytest.mark.parametrize(("fixture", "language"), sorted(EXPECTED))
def test_every_kind_with_its_qualified_name_and_lines(fixture: str, language: str) -> None:
    found = definitions((FIXTURES / fixture).read_bytes(), language)
    assert [(d.kind, d.name, d.start, d.end, d.depth) for d in found] == (
        EXPECTED[(fixture, language)]
    )


SIGNATURES = {
    ("shapes.ts", "typescript"): {
        "Base": "abstract class Base<T> implements Shape",
        "Base.handler": "handler = (value: T): void =>",
        "Shape.area": "area(): number",
        "Handler": "type Handler<T> = (value: T) => void;",
    },
    ("shapes.go", "go"): {
        "Point.Area": "func (p *Point) Area() float64",
        "Point": "type Point struct",
        "Shape": "type Shape interface",
        "Alias": "Alias = Point",
    },
    ("shapes.rs", "rust"): {
        "Point.new": "pub fn new(x: T) -> Self",
        "Area.area": "fn area(&self) -> f64;",
        "MAX": "pub const MAX: usize = 10;",
    },
    ("Shapes.java", "java"): {
        "Shapes.area": "@Override public double area()",
        "Shapes.MAX": "public static final int MAX = 10, MIN = 0;",
    },
    ("shapes.c", "c"): {
        "make": "static int *make(int n)",
        "MAX_SIZE": "#define MAX_SIZE 10",
        "SQUARE": "#define SQUARE(x)",
        "callback_t": "typedef int (*callback_t)(int);",
    },
    ("shapes.cpp", "cpp"): {
        "geo.shapes.Box": "template <typename T> class Box : public Base",
        "geo.shapes.Box.get": "T get() const",
        "geo.shapes.Mode": "enum class Mode : int",
    },
    ("annotated.cpp", "cpp"): {
        "lamp.detail.Registry.Sweep": "void Sweep() REQUIRES(lock_)",
        "lamp.detail.Registry.Oldest": "Entry* Oldest() const REQUIRES(lock_)",
        "lamp.detail.Registry.Newest": "const Entry& Newest() const;",
        "lamp.detail.Registry.TryLock": "bool TryLock() const TRY_ACQUIRE(true, lock_);",
        "lamp.detail.Registry.IsEmpty": "bool Registry::IsEmpty() const EXCLUDES(lock_)",
        "lamp.detail.GetReporter": "PUBLIC_API ReporterInterface* GetReporter()",
        "lamp.detail.GetTable": "static PUBLIC_API LookupTableInterface& GetTable()",
    },
}


@pytest.mark.parametrize(("fixture", "language"), sorted(SIGNATURES))
def test_signatures_are_the_header_on_one_line(fixture: str, language: str) -> None:
    found = definitions((FIXTURES / fixture).read_bytes(), language)
    signatures = {d.name: d.signature for d in found}
    for name, signature in SIGNATURES[(fixture, language)].items():
        assert signatures[name] == signature


USES = {
    "typescript": (
        b'// size here\nconst size: number = 1;\nconst s = "size" + `size ${size}`;\n'
        b"interface Box { size: number }\nlet b: Box = { size };\n",
        "size",
        [(2, 6, True), (3, 27, False), (4, 16, False), (5, 15, False)],
    ),
    "go": (
        b'package p\n// Count is\nconst Count = 1\nvar s = "Count" + `Count`\n'
        b"var r = 'C'\nfunc f() int { return Count + x.Count }\n",
        "Count",
        [(3, 6, True), (6, 22, False), (6, 32, False)],
    ),
    "rust": (
        b"// value\nconst VALUE: u8 = b'v';\nfn value() -> &str { \"value\" }\n"
        b"/* value */ fn g() { let v = value(); let c = 'v'; s.value; }\n",
        "value",
        [(3, 3, True), (4, 29, False), (4, 53, False)],
    ),
    "java": (
        b"class A {\n  // run\n  void run() { String s = \"run\"; char c = 'r'; this.run(); }\n}\n",
        "run",
        [(3, 7, True), (3, 52, False)],
    ),
    "c": (
        b'/* total */\n#define TOTAL 3\nint total(void) { char *s = "total"; // total\n'
        b"  return total() + TOTAL; }\n",
        "total",
        [(3, 4, True), (4, 9, False)],
    ),
    "cpp": (
        b'namespace n { int area() { return 1; } }\n// area\nauto s = R"(area)";\n'
        b"int x = n::area() + obj.area;\n",
        "area",
        [(1, 18, True), (4, 11, False), (4, 24, False)],
    ),
}


@pytest.mark.parametrize("language", sorted(USES))
def test_uses_skip_comments_strings_and_characters(language: str) -> None:
    source, name, expected = USES[language]
    found = [(u.line, u.column, u.is_definition) for u in uses(source, language, name)]
    assert found == expected


ALL_FIXTURES = [*sorted(EXPECTED), ("shapes.py.txt", "python"), ("shapes.js", "javascript")]


@pytest.mark.parametrize(("fixture", "language"), ALL_FIXTURES)
def test_every_definition_is_a_marked_use_of_its_name(fixture: str, language: str) -> None:
    """What `outline` lists and what `find_references` marks as definitions agree."""
    source = (FIXTURES / fixture).read_bytes()
    found = definitions(source, language)
    assert found == sorted(found, key=lambda d: (d.start, d.depth))
    for definition in found:
        bare = definition.name.rsplit(".", 1)[-1]
        if not bare.isidentifier() or bare == "default" or f'"{bare}"' in definition.signature:
            continue  # `~Box`, `operator==`, `#hidden`, `export default`, `module "virtual"`
        marked = [u.line for u in uses(source, language, bare) if u.is_definition]
        assert any(definition.start <= line <= definition.end for line in marked), definition
    names = {d.name.rsplit(".", 1)[-1] for d in found}
    for name in names:
        if name.isidentifier():
            for use in uses(source, language, name):
                if use.is_definition:
                    assert any(
                        d.start <= use.line <= d.end and d.name.endswith(name) for d in found
                    )
