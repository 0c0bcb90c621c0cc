"""Writes src/architecture_portfolio/_types.py from libs/domain/openapi.json.

Run it after the contract changes (`/usr/bin/python3 scripts/generate_types.py`); `--check` exits
with status 1, writing nothing, when the committed file is not what the contract gives now.
Standard library only, so it runs wherever the SDK's tests run.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
SPEC_PATH = PACKAGE_ROOT.parent / "domain" / "openapi.json"
OUTPUT_PATH = PACKAGE_ROOT / "src" / "architecture_portfolio" / "_types.py"

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
SCHEMA_REF = "#/components/schemas/"
LINE_LENGTH = 110
TYPING_NAMES = ("Dict", "List", "Literal", "Optional", "TypedDict", "Union")

# Readable names for enums, keyed by (schema name or operationId, property or parameter name).
# Every other enum is named after its owner and property; identical value sets share one name.
ENUM_NAMES: Dict[Tuple[str, str], str] = {
    ("Application", "status"): "ApplicationStatus",
    ("Application", "dataClassification"): "DataClassification",
    ("Application", "criticality"): "Criticality",
    ("applications.listApplications", "regulation"): "Regulation",
    ("ChangeLogEntry", "field"): "ChangeLogField",
    ("Invitation", "arbRole"): "ArbRole",
    ("Invitation", "status"): "InvitationStatus",
    ("Member", "source"): "MemberSource",
    ("Problem", "errorCode"): "ErrorCode",
}


class UnsupportedSchema(Exception):
    """The contract uses a construct this generator does not translate; extend it rather than guess."""


def pascal(name: str) -> str:
    """`Problem.NOT_FOUND` -> `ProblemNotFound`, `arbRole` -> `ArbRole`, `data_class` -> `DataClass`."""
    words: List[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        if not part:
            continue
        words.append(part.capitalize() if part.isupper() and len(part) > 1 else part[0].upper() + part[1:])
    return "".join(words)


def type_name(schema_name: str) -> str:
    # Upper-case acronyms such as UUID keep their spelling; dotted names such as Problem.NOT_FOUND are joined.
    return schema_name if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", schema_name) else pascal(schema_name)


def ref_name(ref: str) -> str:
    if not ref.startswith(SCHEMA_REF):
        raise UnsupportedSchema(f"reference outside components/schemas: {ref}")
    return ref[len(SCHEMA_REF):]


def operations(spec: Dict[str, Any]) -> List[Tuple[str, str, Dict[str, Any]]]:
    found = []
    for path, item in spec["paths"].items():
        for method in HTTP_METHODS:
            # SCIM's operations (`x-sdk: false`) are for identity tools, not the SDK.
            if method in item and item[method].get("x-sdk", True):
                found.append((path, method, item[method]))
    return found


def collect_refs(node: Any, into: List[str]) -> None:
    """Appends, in document order and without repeats, the schema names `node` refers to."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(SCHEMA_REF) and ref_name(ref) not in into:
            into.append(ref_name(ref))
        for value in node.values():
            collect_refs(value, into)
    elif isinstance(node, list):
        for value in node:
            collect_refs(value, into)


def used_schemas(spec: Dict[str, Any]) -> List[str]:
    """The component schemas the operations reach, directly or through other schemas."""
    schemas = spec["components"]["schemas"]
    names: List[str] = []
    for _path, _method, operation in operations(spec):
        collect_refs(operation, names)
    index = 0
    while index < len(names):
        collect_refs(schemas[names[index]], names)
        index += 1
    return names


def is_object(schema: Dict[str, Any]) -> bool:
    return schema.get("type") == "object" and bool(schema.get("properties"))


class Enums:
    """Names the enums of the contract: one Literal alias per distinct set of two or more values."""

    def __init__(self) -> None:
        self.occurrences: List[Tuple[Tuple[str, str], Tuple[str, ...]]] = []
        self.names: Dict[Tuple[str, ...], str] = {}

    def add(self, owner: str, member: str, schema: Dict[str, Any]) -> None:
        values = schema.get("enum")
        if values is not None and len(values) > 1:
            self.occurrences.append(((owner, member), tuple(values)))

    def assign(self) -> None:
        for key, values in self.occurrences:
            if key in ENUM_NAMES:
                self.claim(values, ENUM_NAMES[key])
        for (owner, member), values in self.occurrences:
            if values not in self.names:
                self.claim(values, pascal(owner.split(".")[-1]) + pascal(member))

    def claim(self, values: Tuple[str, ...], name: str) -> None:
        if self.names.get(values, name) != name:
            raise UnsupportedSchema(f"the enum {list(values)} is named both {self.names[values]} and {name}")
        if values not in self.names and name in self.names.values():
            raise UnsupportedSchema(f"the name {name} would stand for two different enums")
        self.names[values] = name


class Generator:
    def __init__(self, spec: Dict[str, Any]) -> None:
        self.spec = spec
        self.schemas: Dict[str, Any] = spec["components"]["schemas"]
        self.used = used_schemas(spec)
        self.enums = Enums()
        for name in self.used:
            for member, prop in self.schemas[name].get("properties", {}).items():
                self.enums.add(name, member, prop)
        for _path, _method, operation in operations(spec):
            for parameter in operation.get("parameters", []):
                self.enums.add(operation["operationId"], parameter["name"], parameter.get("schema", {}))
        self.enums.assign()

    def annotation(self, schema: Dict[str, Any]) -> str:
        if "$ref" in schema:
            return type_name(ref_name(schema["$ref"]))
        if "anyOf" in schema:
            options = [option for option in schema["anyOf"] if option.get("type") != "null"]
            inner = [self.annotation(option) for option in options]
            joined = inner[0] if len(inner) == 1 else f"Union[{', '.join(inner)}]"
            return f"Optional[{joined}]" if len(options) < len(schema["anyOf"]) else joined
        if "enum" in schema:
            values = tuple(schema["enum"])
            if len(values) == 1:
                return f"Literal[{json.dumps(values[0])}]"
            if values not in self.enums.names:
                raise UnsupportedSchema(f"the enum {list(values)} is not a property or parameter: name it in ENUM_NAMES's way")
            return self.enums.names[values]
        kind = schema.get("type")
        if kind == "string":
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "array":
            return f"List[{self.annotation(schema['items'])}]"
        if kind == "object" and not schema.get("properties") and isinstance(schema.get("additionalProperties"), dict):
            return f"Dict[str, {self.annotation(schema['additionalProperties'])}]"
        raise UnsupportedSchema(f"no Python type for {json.dumps(schema)[:200]}")

    def render(self) -> str:
        body: List[str] = []
        exported: List[str] = []
        for name in self.used:
            schema = self.schemas[name]
            if not is_object(schema):
                body += [""] + comment_lines(describe(schema)) + [f"{type_name(name)} = {self.annotation(schema)}"]
                exported.append(type_name(name))
        for values, alias in self.enums.names.items():
            body += [""] + literal_alias(alias, values)
            exported.append(alias)
        for name in self.used:
            if is_object(self.schemas[name]):
                body += ["", ""] + self.typed_dict(name)
                exported.append(type_name(name))
        body += ["", "", "__all__ = ["] + [f'    "{name}",' for name in sorted(exported)] + ["]", ""]
        text = "\n".join(body)
        typing_names = sorted(name for name in TYPING_NAMES if re.search(rf"\b{name}\b", text))
        header = [
            '"""Types of the API\'s JSON documents, generated from libs/domain/openapi.json.',
            "",
            "Do not edit: run `scripts/generate_types.py` after the contract changes. Objects are TypedDicts",
            "with the wire's (camelCase) keys; enums are Literal aliases.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            f"from typing import {', '.join(typing_names)}",
        ]
        return "\n".join(header) + "\n" + text

    def typed_dict(self, name: str) -> List[str]:
        schema = self.schemas[name]
        properties: Dict[str, Any] = schema["properties"]
        required = set(schema.get("required", []))
        if required != set(properties):
            raise UnsupportedSchema(f"{name}: optional properties need total=False classes, not generated yet")
        lines = [f"class {type_name(name)}(TypedDict):"]
        title = f"{schema['title']}: the `{name}` schema." if "title" in schema else f"The `{name}` schema."
        lines += docstring(describe(schema) or title)
        for member, prop in properties.items():
            if not member.isidentifier() or keyword.iskeyword(member):
                raise UnsupportedSchema(f"{name}.{member} is not a Python identifier")
            lines += ["    " + line for line in comment_lines(describe(prop))]
            lines.append(f"    {member}: {self.annotation(prop)}")
        return lines


def literal_alias(alias: str, values: Tuple[str, ...]) -> List[str]:
    one_line = f"{alias} = Literal[{', '.join(json.dumps(value) for value in values)}]"
    if len(one_line) <= LINE_LENGTH:
        return [one_line]
    return [f"{alias} = Literal["] + [f"    {json.dumps(value)}," for value in values] + ["]"]


def describe(schema: Dict[str, Any]) -> str:
    text: str = schema.get("description", "")
    if schema.get("type") == "string" and "pattern" in schema and schema.get("format") is None:
        text = (text + " " if text else "") + f"Pattern: `{schema['pattern']}`."
    return text.strip()


def comment_lines(text: str) -> List[str]:
    if not text:
        return []
    return ["#: " + line for line in textwrap.wrap(text, 96, break_long_words=False, break_on_hyphens=False)]


def docstring(text: str) -> List[str]:
    safe = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    wrapped = textwrap.wrap(safe, 96, break_long_words=False, break_on_hyphens=False)
    if len(wrapped) == 1:
        return [f'    """{wrapped[0]}"""', ""]
    return ['    """' + wrapped[0]] + ["    " + line for line in wrapped[1:]] + ['    """', ""]


def render(spec: Dict[str, Any]) -> str:
    return Generator(spec).render()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the committed file is out of date")
    arguments = parser.parse_args(argv)
    text = render(json.loads(SPEC_PATH.read_text(encoding="utf-8")))
    if arguments.check:
        current = OUTPUT_PATH.read_text(encoding="utf-8") if OUTPUT_PATH.exists() else ""
        if current != text:
            print(f"{OUTPUT_PATH} is out of date: run scripts/generate_types.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
