"""The package supports Python 3.9: its syntax is checked here, whichever Python runs the tests."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import List

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
BUILTIN_GENERICS = {"list", "dict", "tuple", "type", "set", "frozenset"}
SOURCES: List[Path] = sorted(
    path for folder in ("src", "scripts", "tests") for path in (PACKAGE_ROOT / folder).rglob("*.py")
)


def test_the_sources_are_found() -> None:
    names = {path.name for path in SOURCES}
    assert {"_client.py", "_types.py", "generate_types.py", "test_live.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=[str(path.relative_to(PACKAGE_ROOT)) for path in SOURCES])
def test_each_source_file_parses_as_python_3_9(path: Path) -> None:
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 9))


def test_the_check_rejects_newer_syntax() -> None:
    with pytest.raises(SyntaxError):
        ast.parse("match x:\n    case 1:\n        pass\n", feature_version=(3, 9))


@pytest.mark.parametrize("path", SOURCES, ids=[str(path.relative_to(PACKAGE_ROOT)) for path in SOURCES])
def test_each_source_file_defers_its_annotations(path: Path) -> None:
    # With deferred annotations, `X | None` or `list[int]` in an annotation would not fail on 3.9,
    # but they are still kept out: typing.get_type_hints evaluates annotations at run time.
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports_future = any(
        isinstance(node, ast.ImportFrom) and node.module == "__future__" and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    )
    annotations = [annotation for node in ast.walk(tree) for annotation in _annotations(node)]
    assert imports_future or not annotations, f"{path.name} has annotations without from __future__ import annotations"
    for annotation in annotations:
        for part in ast.walk(annotation):
            assert not (isinstance(part, ast.BinOp) and isinstance(part.op, ast.BitOr)), f"{path.name}:{part.lineno} uses X | Y"
            assert not (
                isinstance(part, ast.Subscript) and isinstance(part.value, ast.Name) and part.value.id in BUILTIN_GENERICS
            ), f"{path.name}:{part.lineno} subscripts a builtin"


def _annotations(node: ast.AST) -> List[ast.expr]:
    found: List[ast.expr] = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = node.args
        for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [arguments.vararg, arguments.kwarg]:
            if argument is not None and argument.annotation is not None:
                found.append(argument.annotation)
        if node.returns is not None:
            found.append(node.returns)
    elif isinstance(node, ast.AnnAssign):
        found.append(node.annotation)
    return found
