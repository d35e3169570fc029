"""outline through the real registry and real files: a file's definitions as
`path:START-END KIND NAME  SIGNATURE`, per language, in file order; a folder's top-level
definitions, most important files first and public definitions first in each, within the
cap and saying what it left out; what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from lantern.tools.base import ToolResult
from lantern.tools.outline import BIG_FILE, SOURCE_BUDGET
from lantern.tools.registry import run_tool
from lantern.workspace.text import MAX_OUTPUT_BYTES

from tests.conftest import ctx_for, rows

# One small file per language and the lines its outline must show, in file order.
FIXTURES: dict[str, tuple[str, list[str]]] = {
    "shapes.py": (
        'import os\n\nLIMIT = 10\n\n\nclass Shape:\n    """A shape."""\n\n'
        "    def area(self) -> float:\n        return 0.0\n\n"
        "    @property\n    def name(self) -> str:\n        return 'shape'\n\n\n"
        "def make(kind: str, *, size: int = 1) -> Shape:\n"
        "    def inner():\n        return kind\n    return Shape()\n",
        [
            "shapes.py:3-3 constant LIMIT  LIMIT = 10",
            "shapes.py:6-14 class Shape  class Shape:",
            "shapes.py:9-10 method Shape.area  def area(self) -> float:",
            "shapes.py:12-14 method Shape.name  @property def name(self) -> str:",
            "shapes.py:17-20 function make  def make(kind: str, *, size: int = 1) -> Shape:",
            "shapes.py:18-19 function make.inner  def inner():",
        ],
    ),
    "shapes.js": (
        "const LIMIT = 10;\n\nclass Shape {\n  constructor(sides) {\n    this.sides = sides;\n"
        "  }\n\n  area() {\n    return 0;\n  }\n}\n\nfunction make(kind, size = 1) {\n"
        "  return new Shape(kind);\n}\n",
        [
            "shapes.js:1-1 constant LIMIT  const LIMIT = 10;",
            "shapes.js:3-11 class Shape  class Shape",
            "shapes.js:4-6 method Shape.constructor  constructor(sides)",
            "shapes.js:8-10 method Shape.area  area()",
            "shapes.js:13-15 function make  function make(kind, size = 1)",
        ],
    ),
    "shapes.ts": (
        'export interface Shape {\n  area(): number;\n}\n\nexport type Kind = "a" | "b";\n\n'
        "export enum Color {\n  Red,\n}\n\nexport class Square implements Shape {\n"
        "  constructor(private side: number) {}\n\n  area(): number {\n"
        "    return this.side ** 2;\n  }\n}\n\n"
        "export function make(kind: Kind, size = 1): Shape {\n  return new Square(size);\n}\n",
        [
            "shapes.ts:1-3 interface Shape  interface Shape",
            "shapes.ts:2-2 method Shape.area  area(): number",
            'shapes.ts:5-5 type Kind  type Kind = "a" | "b";',
            "shapes.ts:7-9 enum Color  enum Color",
            "shapes.ts:11-17 class Square  class Square implements Shape",
            "shapes.ts:12-12 method Square.constructor  constructor(private side: number)",
            "shapes.ts:14-16 method Square.area  area(): number",
            "shapes.ts:19-21 function make  function make(kind: Kind, size = 1): Shape",
        ],
    ),
    "view.tsx": (
        "type Props = { name: string };\n\nexport function Hello({ name }: Props) {\n"
        "  return <div>{name}</div>;\n}\n\n"
        "export const Button = (props: Props) => <button>{props.name}</button>;\n",
        [
            "view.tsx:1-1 type Props  type Props = { name: string };",
            "view.tsx:3-5 function Hello  function Hello({ name }: Props)",
            "view.tsx:7-7 function Button  const Button = (props: Props) =>",
        ],
    ),
    "shapes.go": (
        (
            "package shapes\n"
            "\n"
            "const Limit = 10\n"
            "\n"
            "type Shape interface {\n"
            "\tArea() float64\n"
            "}\n"
            "\n"
            "type Square struct {\n"
            "\tSide float64\n"
            "}\n"
            "\n"
            "func (s Square) Area() float64 {\n"
            "\treturn s.Side * s.Side\n"
            "}\n"
            "\n"
            "func Make(side float64) Square {\n"
            "\treturn Square{Side: side}\n"
            "}\n"
        ),
        [
            "shapes.go:3-3 constant Limit  const Limit = 10",
            "shapes.go:5-7 interface Shape  type Shape interface",
            "shapes.go:6-6 method Shape.Area  Area() float64",
            "shapes.go:9-11 struct Square  type Square struct",
            "shapes.go:13-15 method Square.Area  func (s Square) Area() float64",
            "shapes.go:17-19 function Make  func Make(side float64) Square",
        ],
    ),
    "shapes.rs": (
        (
            "pub const LIMIT: u32 = 10;\n"
            "\n"
            "pub trait Shape {\n"
            "    fn area(&self) -> f64;\n"
            "}\n"
            "\n"
            "pub struct Square {\n"
            "    side: f64,\n"
            "}\n"
            "\n"
            "impl Shape for Square {\n"
            "    fn area(&self) -> f64 {\n"
            "        self.side * self.side\n"
            "    }\n"
            "}\n"
            "\n"
            "pub enum Kind {\n"
            "    Round,\n"
            "}\n"
            "\n"
            "pub fn make(side: f64) -> Square {\n"
            "    Square { side }\n"
            "}\n"
        ),
        [
            "shapes.rs:1-1 constant LIMIT  pub const LIMIT: u32 = 10;",
            "shapes.rs:3-5 trait Shape  pub trait Shape",
            "shapes.rs:4-4 method Shape.area  fn area(&self) -> f64;",
            "shapes.rs:7-9 struct Square  pub struct Square",
            "shapes.rs:12-14 method Square.area  fn area(&self) -> f64",
            "shapes.rs:17-19 enum Kind  pub enum Kind",
            "shapes.rs:21-23 function make  pub fn make(side: f64) -> Square",
        ],
    ),
    "Shapes.java": (
        (
            "package shapes;\n"
            "\n"
            "public class Shapes {\n"
            "    static final int LIMIT = 10;\n"
            "\n"
            "    interface Shape {\n"
            "        double area();\n"
            "    }\n"
            "\n"
            "    enum Kind { ROUND, SQUARE }\n"
            "\n"
            "    public static Shape make(double side) {\n"
            "        return () -> side * side;\n"
            "    }\n"
            "}\n"
        ),
        [
            "Shapes.java:3-15 class Shapes  public class Shapes",
            "Shapes.java:4-4 constant Shapes.LIMIT  static final int LIMIT = 10;",
            "Shapes.java:6-8 interface Shapes.Shape  interface Shape",
            "Shapes.java:7-7 method Shapes.Shape.area  double area();",
            "Shapes.java:10-10 enum Shapes.Kind  enum Kind",
            "Shapes.java:12-14 method Shapes.make  public static Shape make(double side)",
        ],
    ),
    "shapes.c": (
        (
            "#include <stdio.h>\n"
            "\n"
            "#define LIMIT 10\n"
            "\n"
            "struct square {\n"
            "    double side;\n"
            "};\n"
            "\n"
            "typedef struct square square_t;\n"
            "\n"
            "double area(const square_t *s) {\n"
            "    return s->side * s->side;\n"
            "}\n"
            "\n"
            "static int helper(int x);\n"
        ),
        [
            "shapes.c:3-3 constant LIMIT  #define LIMIT 10",
            "shapes.c:5-7 struct square  struct square",
            "shapes.c:9-9 type square_t  typedef struct square square_t;",
            "shapes.c:11-13 function area  double area(const square_t *s)",
        ],
    ),
    "shapes.cpp": (
        (
            "#include <string>\n"
            "\n"
            "namespace shapes {\n"
            "\n"
            "class Square {\n"
            "public:\n"
            "    explicit Square(double side) : side_(side) {}\n"
            "    double area() const { return side_ * side_; }\n"
            "private:\n"
            "    double side_;\n"
            "};\n"
            "\n"
            "double Square_area(const Square& s) {\n"
            "    return s.area();\n"
            "}\n"
            "\n"
            "}  // namespace shapes\n"
        ),
        [
            "shapes.cpp:3-17 namespace shapes  namespace shapes",
            "shapes.cpp:5-11 class shapes.Square  class Square",
            "shapes.cpp:7-7 method shapes.Square.Square  "
            "explicit Square(double side) : side_(side)",
            "shapes.cpp:8-8 method shapes.Square.area  double area() const",
            "shapes.cpp:13-15 function shapes.Square_area  double Square_area(const Square& s)",
        ],
    ),
}


async def outline(root: Path, path: str) -> ToolResult:
    return await run_tool("outline", {"path": path}, ctx_for(root))


@pytest.mark.parametrize("name", sorted(FIXTURES))
async def test_a_file_outline_lists_every_definition(tmp_path: Path, name: str) -> None:
    source, expected = FIXTURES[name]
    (tmp_path / name).write_text(source, "utf-8")
    result = await outline(tmp_path, name)
    assert rows(result) == expected
    head = result.content.splitlines()[0]
    assert head == f"[untrusted outline of {name}: {len(expected)} definition(s)]"
    # Each definition's lines up to its name count as seen (an answer may cite them).
    spans = [line.split(":", 1)[1].split(" ", 1)[0].split("-") for line in expected]
    assert [(s.path, s.start) for s in result.seen] == [(name, int(a)) for a, _ in spans]
    assert all(s.start <= s.end <= int(b) for s, (_, b) in zip(result.seen, spans, strict=True))
    if name == "shapes.py":  # `@property` on line 12, `def name` on line 13
        assert ("shapes.py", 12, 13) in [(s.path, s.start, s.end) for s in result.seen]


async def test_a_folder_outline_ranks_shallow_files_and_busy_files_first(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "deep").mkdir(parents=True)
    (tmp_path / "one.py").write_text("def a():\n    pass\n", "utf-8")
    (tmp_path / "three.py").write_text("def b(): pass\ndef c(): pass\ndef d(): pass\n", "utf-8")
    (tmp_path / "pkg" / "two.js").write_text("function e() {}\nfunction f() {}\n", "utf-8")
    (tmp_path / "pkg" / "deep" / "many.py").write_text(
        "".join(f"def g{i}(): pass\n" for i in range(6)), "utf-8"
    )
    (tmp_path / "pkg" / "notes.txt").write_text("def h(): pass\n", "utf-8")  # not code
    (tmp_path / "nested.py").write_text("class K:\n    def m(self): pass\n", "utf-8")
    found = rows(await outline(tmp_path, "."))
    files = list(dict.fromkeys(line.split(":", 1)[0] for line in found))
    assert files == ["three.py", "nested.py", "one.py", "pkg/two.js", "pkg/deep/many.py"]
    assert "nested.py:1-2 class K  class K:" in found
    assert not any("K.m" in line for line in found)  # a folder shows top-level ones only
    assert not any("notes.txt" in line for line in found)


async def test_a_large_folder_outline_is_capped_bounded_and_says_so(tmp_path: Path) -> None:
    """40 files of 40 public functions: files are outlined in path order until their
    lines fill the output; all but the last are shown whole, and two notes count what
    the outline left out and the files it did not outline."""
    for i in range(40):
        body = "".join(f"def function_number_{j}_of_file_{i}(argument): pass\n" for j in range(40))
        (tmp_path / f"m{i:02d}.py").write_text(body, "utf-8")
    result = await outline(tmp_path, ".")
    assert result.bytes <= MAX_OUTPUT_BYTES + 1024
    shown = rows(result)
    whole_files = len(shown) // 40  # files m00, m01, … are shown whole, then one in part
    files = list(dict.fromkeys(line.split(":", 1)[0] for line in shown))
    assert files == [f"m{i:02d}.py" for i in range(whole_files + 1)]
    *_, left, bounded = result.content.splitlines()
    outlined = int(bounded.split(" ")[1])
    assert outlined == whole_files + 1 < 40
    assert bounded == (
        f"[outlined {outlined} of 40 supported file(s), shallowest first, then by path; "
        "outline a sub-folder or a file to see the rest]"
    )
    more = 40 * outlined - len(shown)
    assert left == (
        f"[{more:,} more definition(s) in {outlined - whole_files} file(s) not shown: "
        f"{more:,} public definition(s) (public definitions are kept first, "
        "private helpers and constants last); outline a sub-folder or a file to see them]"
    )
    assert result.content.splitlines()[0].startswith(
        f"[untrusted outline of .: top-level definitions of {outlined} file(s),"
    )
    assert len(result.seen) == len(shown)


async def test_a_folder_outline_passes_over_big_files_and_stops_at_its_source_budget(
    tmp_path: Path,
) -> None:
    """Files as large as BIG_FILE: the outline stops once it outlined SOURCE_BUDGET bytes
    of them; a larger file (a generated table, most often) is passed over and counted."""

    def module(name: str, size: int) -> str:
        head = f"def {name}():\n    pass\n"
        return head + "#" * (size - len(head) - 1) + "\n"

    (tmp_path / "a_table.py").write_text(module("table", BIG_FILE + 1), "utf-8")
    for i in range(6):
        (tmp_path / f"m{i}.py").write_text(module(f"f{i}", BIG_FILE), "utf-8")
    result = await outline(tmp_path, ".")
    budget = SOURCE_BUDGET // BIG_FILE
    assert [line.split(" ")[2] for line in rows(result)] == [f"f{i}" for i in range(budget)]
    assert result.content.splitlines()[-1] == (
        f"[outlined {budget} of 7 supported file(s), shallowest first, then by path; "
        f"1 file(s) over {BIG_FILE >> 10:,} KiB passed over (often generated); outline a "
        "sub-folder or a file to see the rest]"
    )
    # The table itself is outlined when asked for.
    assert rows(await outline(tmp_path, "a_table.py")) == [
        "a_table.py:1-2 function table  def table():"
    ]


# A folder of files in several languages, each with public, private and constant
# definitions in mixed source order.
MIXED: dict[str, str] = {
    "src/cache.py": (
        '_PATH = "x"\nLIMIT = 3\n\n\ndef _clean(text):\n    return text\n\n\n'
        "class Cache:\n    def _evict(self):\n        pass\n\n\n"
        "def load(path):\n    return path\n\n\nclass _Entry:\n    pass\n"
    ),
    "src/shapes.go": (
        "package shapes\n\nconst Limit = 1\n\nfunc helper() {}\n\ntype Square struct{}\n\n"
        "func New() Square { return Square{} }\n"
    ),
    "src/lib.rs": "const MIN: u32 = 0;\nfn helper() {}\npub fn make() {}\npub const MAX: u32 = 1;",
    "src/app.ts": "const cache = new Map();\nfunction parse() {}\nexport function load() {}\n",
    "src/util.c": (
        "static int helper(int x) { return x; }\nint area(int s) { return s * s; }\n"
        "#define SQUARE(x) ((x) * (x))\n"
    ),
    "src/Shapes.java": "class Local {}\n\npublic class Shapes {}\n",
}


async def test_a_folder_outline_shows_public_definitions_first_in_each_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    for rel, source in MIXED.items():
        (tmp_path / rel).write_text(source, "utf-8")
    result = await outline(tmp_path, "src")
    assert result.content.splitlines()[0] == (
        "[untrusted outline of src: top-level definitions of 6 file(s), shallower files and "
        "files with more definitions first; in each file public definitions, then private "
        "helpers, then constants]"
    )
    assert rows(result) == [
        "src/cache.py:9-11 class Cache  class Cache:",
        "src/cache.py:14-15 function load  def load(path):",
        "src/cache.py:5-6 function _clean  def _clean(text):",
        "src/cache.py:18-19 class _Entry  class _Entry:",
        "src/cache.py:2-2 constant LIMIT  LIMIT = 3",
        'src/cache.py:1-1 constant _PATH  _PATH = "x"',
        "src/lib.rs:3-3 function make  pub fn make()",
        "src/lib.rs:2-2 function helper  fn helper()",
        "src/lib.rs:4-4 constant MAX  pub const MAX: u32 = 1;",
        "src/lib.rs:1-1 constant MIN  const MIN: u32 = 0;",
        "src/shapes.go:7-7 struct Square  type Square struct",
        "src/shapes.go:9-9 function New  func New() Square",
        "src/shapes.go:5-5 function helper  func helper()",
        "src/shapes.go:3-3 constant Limit  const Limit = 1",
        "src/app.ts:3-3 function load  function load()",
        "src/app.ts:2-2 function parse  function parse()",
        "src/app.ts:1-1 constant cache  const cache = new Map();",
        "src/util.c:2-2 function area  int area(int s)",
        "src/util.c:1-1 function helper  static int helper(int x)",
        "src/util.c:3-3 macro SQUARE  #define SQUARE(x)",  # a `#define`: with the constants
        "src/Shapes.java:3-3 class Shapes  public class Shapes",
        "src/Shapes.java:1-1 class Local  class Local",
    ]
    assert not any("more definition(s)" in line for line in result.content.splitlines())
    # The file itself is outlined as a map of it: in source order, members included.
    assert rows(await outline(tmp_path, "src/cache.py")) == [
        'src/cache.py:1-1 constant _PATH  _PATH = "x"',
        "src/cache.py:2-2 constant LIMIT  LIMIT = 3",
        "src/cache.py:5-6 function _clean  def _clean(text):",
        "src/cache.py:9-11 class Cache  class Cache:",
        "src/cache.py:10-11 method Cache._evict  def _evict(self):",
        "src/cache.py:14-15 function load  def load(path):",
        "src/cache.py:18-19 class _Entry  class _Entry:",
    ]


async def test_a_capped_folder_outline_keeps_public_definitions_first_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    """20 files of 10 public functions, 10 private helpers and 10 constants each, more
    than the cap: files are outlined until their lines fill it; of those, every public
    function is shown, and every helper, before any constant, so the last file's
    public functions and helpers are kept and earlier files' constants left out (files
    in order); the notes count what is left out, by group and files."""
    for i in range(20):
        lines = []
        for j in range(10):
            lines.append(f"PUBLIC_CONSTANT_NUMBER_{j:02d}_IN_FILE_{i:02d} = {j}")
            lines.append(f"def _private_helper_number_{j:02d}_in_file_{i:02d}(argument): pass")
            lines.append(f"def public_function_number_{j:02d}_in_file_{i:02d}(argument): pass")
        (tmp_path / f"m{i:02d}.py").write_text("\n".join(lines) + "\n", "utf-8")
    result = await outline(tmp_path, ".")
    shown = rows(result)
    assert len("\n".join(shown).encode()) <= MAX_OUTPUT_BYTES
    *_, left, bounded = result.content.splitlines()
    outlined = int(bounded.split(" ")[1])
    assert 1 < outlined < 20
    listed = [line.split(" ")[2] for line in shown]
    tail = [f"number_{j:02d}_in_file_{i:02d}" for i in range(outlined) for j in range(10)]
    publics = [f"public_function_{name}" for name in tail]
    helpers = [f"_private_helper_{name}" for name in tail]
    constants = [f"PUBLIC_CONSTANT_{name.upper()}" for name in tail]  # file by file
    assert set(publics) | set(helpers) <= set(listed)
    kept_constants = [name for name in listed if name.startswith("PUBLIC_CONSTANT")]
    assert 0 < len(kept_constants) < len(constants)
    assert set(kept_constants) == set(constants[: len(kept_constants)])  # none skipped
    assert not any(name.endswith(f"_IN_FILE_{outlined - 1:02d}") for name in kept_constants)
    # Shown file by file: each file's public functions, its helpers, its constants kept.
    for i in range(outlined):
        mine = [name for name in listed if name.lower().endswith(f"_in_file_{i:02d}")]
        own = [name for name in kept_constants if name.endswith(f"_IN_FILE_{i:02d}")]
        assert mine == publics[i * 10 : i * 10 + 10] + helpers[i * 10 : i * 10 + 10] + own
    files = [line.split(":", 1)[0] for line in shown]
    assert files == sorted(files)
    left_constants = len(constants) - len(kept_constants)
    left_files = outlined - len(kept_constants) // 10
    assert left == (
        f"[{left_constants} more definition(s) in {left_files} file(s) not shown: "
        f"{left_constants} constant(s) (public definitions are kept first, private helpers "
        "and constants last); outline a sub-folder or a file to see them]"
    )
    assert bounded == (
        f"[outlined {outlined} of 20 supported file(s), shallowest first, then by path; "
        "outline a sub-folder or a file to see the rest]"
    )


async def test_a_folder_over_the_walks_cap_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small files, more than the walk takes: the walk's own note, not a second one."""
    from lantern.tools.navigation import files

    monkeypatch.setattr(files, "MAX_CANDIDATES", 3)
    for i in range(5):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}(): pass\n", "utf-8")
    result = await outline(tmp_path, ".")
    assert [line.split(" ")[2] for line in rows(result)] == ["f0", "f1", "f2"]
    assert result.content.splitlines()[-1] == (
        "[2 more candidate file(s) not looked at (over 3); narrow with path=]"
    )
    assert "outlined" not in result.content


async def test_an_unsupported_file_names_the_supported_languages(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# def x\n", "utf-8")
    result = await outline(tmp_path, "notes.md")
    assert result.is_error and result.code == "unsupported_language"
    assert "notes.md" in result.content
    for language in ("python", "javascript", "typescript", "go", "rust", "java", "c", "cpp"):
        assert language in result.content


async def test_a_binary_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"def x(): pass\n\x00\x01\x02")
    result = await outline(tmp_path, "blob.py")
    assert result.is_error and result.code == "binary_file"


async def test_an_empty_or_definition_free_file(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("print('hi')\n", "utf-8")
    result = await outline(tmp_path, "empty.py")
    assert not result.is_error and result.content == "[no definitions in empty.py]"
    assert result.seen == []


async def test_every_root_of_a_multi_root_workspace(tmp_path: Path) -> None:
    for name in ("api", "web"):
        (tmp_path / name).mkdir()
    (tmp_path / "api" / "server.py").write_text("def serve(): pass\n", "utf-8")
    (tmp_path / "web" / "client.js").write_text("function fetchAll() {}\n", "utf-8")
    ctx = ctx_for([tmp_path / "api", tmp_path / "web"])
    result = await run_tool("outline", {"path": "."}, ctx)
    assert rows(result) == [
        "api/server.py:1-1 function serve  def serve():",
        "web/client.js:1-1 function fetchAll  function fetchAll()",
    ]
    found = await run_tool("find_symbol", {"name": "fetchAll"}, ctx)
    assert rows(found) == ["web/client.js:1-1 function fetchAll  function fetchAll()"]


@pytest.mark.parametrize("name", sorted(FIXTURES))
async def test_every_definition_is_found_by_name_and_marked_among_its_uses(
    tmp_path: Path, name: str
) -> None:
    """Per language: find_symbol of each qualified name lists that definition first, and
    find_references of its last part marks the definition's line (a decorated one's
    name is below its first line)."""
    source, expected = FIXTURES[name]
    (tmp_path / name).write_text(source, "utf-8")
    ctx = ctx_for(tmp_path)
    for line in expected:
        qualified = line.split(" ", 3)[2]
        start, end = map(int, line.split(":", 1)[1].split(" ", 1)[0].split("-"))
        found = await run_tool("find_symbol", {"name": qualified}, ctx)
        assert rows(found)[0] == line, (qualified, found.content)
        uses = rows(await run_tool("find_references", {"name": qualified}, ctx))
        marked = [u for u in uses if start <= int(u.split(":")[1]) <= end]
        assert marked and marked[0].endswith(" [definition]"), (qualified, uses)
