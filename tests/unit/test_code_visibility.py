"""lantern.code: which top-level definitions are public, per language, by the language's
own rule (what a folder outline shows first); members are never judged."""

from __future__ import annotations

import pytest
from lantern.code.definitions import definitions

# language: (source, {top-level name: public})
CASES: dict[str, tuple[str, dict[str, bool]]] = {
    "python": (
        "LIMIT = 1\n_CACHE = {}\n\n"
        "def load(): pass\n\ndef _parse(): pass\n\n"
        "def __getattr__(name): pass\n\n"
        "class Reader:\n    def _skip(self): pass\n\nclass _State: pass\n",
        {
            "LIMIT": True,
            "_CACHE": False,
            "load": True,
            "_parse": False,
            "__getattr__": True,
            "Reader": True,
            "_State": False,
        },
    ),
    "javascript": (
        "export function load() {}\nfunction parse() {}\nfunction shared() {}\n"
        "export const LIMIT = 1;\nconst CACHE = {};\nclass Reader {}\n"
        "export default Reader;\nexport { shared as common };\n"
        "export { parse } from './other.js';\n",
        {
            "load": True,
            "parse": False,  # re-exported from another file, not this one
            "shared": True,
            "LIMIT": True,
            "CACHE": False,
            "Reader": True,
        },
    ),
    "typescript": (
        "export interface Shape {}\ninterface Internal {}\nexport type Kind = 'a';\n"
        "export enum Color { Red }\nexport abstract class Base {}\nclass Helper {}\n"
        "export const make = () => 1;\nconst build = () => 2;\n"
        "@sealed\nexport class Decorated {}\nexport namespace Api { function inner() {} }\n",
        {
            "Shape": True,
            "Internal": False,
            "Kind": True,
            "Color": True,
            "Base": True,
            "Helper": False,
            "make": True,
            "build": False,
            "Decorated": True,
            "Api": True,
        },
    ),
    "tsx": (
        "type Props = {};\nexport function Card(p: Props) { return <div />; }\n"
        "function Row() { return <span />; }\n",
        {"Props": False, "Card": True, "Row": False},
    ),
    "go": (
        "package shapes\n\nconst Limit = 1\nconst depth = 2\n\ntype Square struct{}\n"
        "type point struct{}\n\nfunc (s Square) Area() int { return 0 }\n"
        "func (s Square) scale() {}\nfunc New() Square { return Square{} }\n"
        "func helper() {}\n",
        {
            "Limit": True,
            "depth": False,
            "Square": True,
            "point": False,
            "Square.Area": True,
            "Square.scale": False,
            "New": True,
            "helper": False,
        },
    ),
    "rust": (
        "pub const MAX: u32 = 1;\nconst MIN: u32 = 0;\n"
        "pub fn make() {}\npub(crate) fn shared() {}\nfn helper() {}\n"
        "#[derive(Debug)]\npub struct Point;\nstruct Hidden;\n"
        "pub trait Shape {}\ntrait Inner {}\nmod detail {}\npub mod api {}\n"
        "impl Point {\n    fn private_method(&self) {}\n}\n",
        {
            "MAX": True,
            "MIN": False,
            "make": True,
            "shared": True,
            "helper": False,
            "Point": True,
            "Hidden": False,
            "Shape": True,
            "Inner": False,
            "detail": False,
            "api": True,
        },
    ),
    "java": (
        "package shapes;\n\n@Deprecated\npublic class Shapes {\n"
        "    private static int count() { return 0; }\n}\n\n"
        "class PackageOnly {}\n\ninterface Local {}\n",
        {"Shapes": True, "PackageOnly": False, "Local": False},
    ),
    "c": (
        "#define LIMIT 10\nstatic const int depth = 2;\nconst int width = 3;\n"
        "struct point { int x; };\nint area(int s) { return s * s; }\n"
        "static int helper(int x) { return x; }\n"
        "static inline int twice(int x) { return 2 * x; }\n"
        "int sum(int a[static 4]) { return a[0]; }\n",
        {
            "LIMIT": True,
            "depth": False,
            "width": True,
            "point": True,
            "area": True,
            "helper": False,
            "twice": False,
            "sum": True,  # `static` after the name is not a storage class
        },
    ),
    "cpp": (
        "namespace {\nint hidden() { return 1; }\n}\n"
        "static int helper() { return 2; }\nint api() { return 3; }\n"
        "class Square {\npublic:\n    int area() const;\n};\n"
        "template <typename T> static T pick(T x) { return x; }\n",
        {"hidden": False, "helper": False, "api": True, "Square": True, "pick": False},
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_top_level_definitions_are_public_by_the_languages_rule(language: str) -> None:
    source, expected = CASES[language]
    found = definitions(source.encode(), language)
    assert {d.name: d.public for d in found if d.depth == 0} == expected
    assert all(d.public for d in found if d.depth > 0)  # members are not judged


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_a_script_without_exports_keeps_underscored_names_private(language: str) -> None:
    source = "function load() {}\nfunction _parse() {}\nconst LIMIT = 1;\nconst _CACHE = {};\n"
    found = definitions(source.encode(), language)
    assert {d.name: d.public for d in found} == {
        "load": True,
        "_parse": False,
        "LIMIT": True,
        "_CACHE": False,
    }
