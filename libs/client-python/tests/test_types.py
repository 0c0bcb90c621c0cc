"""The generated types: up to date with openapi.json, and true to it."""

from __future__ import annotations

import importlib.util
import json
import typing
from pathlib import Path
from types import ModuleType
from typing import Any, Dict

import pytest

from architecture_portfolio import _types

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
GENERATED = PACKAGE_ROOT / "src" / "architecture_portfolio" / "_types.py"
SPEC = json.loads((PACKAGE_ROOT.parent / "domain" / "openapi.json").read_text(encoding="utf-8"))


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_types", PACKAGE_ROOT / "scripts" / "generate_types.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_types_are_what_the_script_generates_from_openapi_json() -> None:
    assert GENERATED.read_text(encoding="utf-8") == generator().render(SPEC), (
        "src/architecture_portfolio/_types.py is out of date: run /usr/bin/python3 scripts/generate_types.py"
    )


def test_the_check_mode_of_the_script_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    assert generator().main(["--check"]) == 0


def test_a_change_of_the_contract_changes_the_generated_types() -> None:
    changed: Dict[str, Any] = json.loads(json.dumps(SPEC))
    changed["components"]["schemas"]["Member"]["properties"]["source"]["enum"].append("SCIM")
    assert '"SSO_JIT", "SCIM"' in generator().render(changed)


def object_schemas() -> Dict[str, Dict[str, Any]]:
    schemas: Dict[str, Dict[str, Any]] = SPEC["components"]["schemas"]
    return {name: schema for name, schema in schemas.items() if schema.get("type") == "object" and schema.get("properties")}


@pytest.mark.parametrize(
    "name",
    ["Application", "ChangeLogEntry", "FunctionTreeNode", "BusinessFunction", "PosiTreeNode", "LinkedApplication",
     "ReferentialStats", "InvitationRequest", "Invitation", "Member", "Problem"],
)
def test_each_typed_dict_has_the_schemas_keys_all_required(name: str) -> None:
    typed_dict = getattr(_types, name)
    schema = object_schemas()[name]
    assert set(typing.get_type_hints(typed_dict)) == set(schema["properties"])
    assert typed_dict.__required_keys__ == frozenset(schema["required"])


def test_the_types_of_some_fields() -> None:
    hints = typing.get_type_hints(_types.Application)
    assert hints["status"] == typing.Literal["ACTIVE", "PLANNED", "DEPRECATED", "RETIRED"]
    assert hints["parentCode"] == typing.Optional[str]
    assert hints["rtoHours"] == typing.Optional[float]
    assert hints["licenseCost"] == typing.Optional[int]
    assert typing.get_type_hints(_types.FunctionTreeNode)["children"] == typing.List[_types.FunctionTreeNode]
    assert typing.get_type_hints(_types.ReferentialStats)["applicationsByStatus"] == typing.Dict[str, int]
    assert typing.get_type_hints(_types.ProblemNotFound)["errorCode"] == typing.Literal["NOT_FOUND"]


def test_each_enum_of_the_operations_parameters_has_its_literal() -> None:
    parameters = SPEC["paths"]["/referentiel/applications"]["get"]["parameters"]
    enums = {parameter["name"]: parameter["schema"]["enum"] for parameter in parameters if "enum" in parameter["schema"]}
    assert list(typing.get_args(_types.DataClassification)) == enums["data_class"]
    assert list(typing.get_args(_types.Criticality)) == enums["criticality"]
    assert list(typing.get_args(_types.Regulation)) == enums["regulation"]
    assert list(typing.get_args(_types.ApplicationStatus)) == enums["status"]
