"""The SDK against the contract: every operation of openapi.json is implemented, as the contract says."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import httpx
import pytest

import architecture_portfolio
from architecture_portfolio import OPERATIONS, Client
from architecture_portfolio._resources import (
    Applications,
    ApplicationsWithResponse,
    Functions,
    FunctionsWithResponse,
    Invitations,
    InvitationsWithResponse,
)
from support import BASE_URL, Server, ok

OPENAPI_PATH = Path(__file__).resolve().parents[2] / "domain" / "openapi.json"
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def contract_operations() -> Dict[str, Tuple[str, str, Dict[str, Any]]]:
    """operationId -> (HTTP method, path template, operation) for every operation of openapi.json
    that is for the SDKs (SCIM's, marked `x-sdk: false`, are for identity tools)."""
    spec = json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))
    found: Dict[str, Tuple[str, str, Dict[str, Any]]] = {}
    for template, item in spec["paths"].items():
        for method in HTTP_METHODS:
            if method in item and item[method].get("x-sdk", True):
                found[item[method]["operationId"]] = (method.upper(), template, item[method])
    return found


CONTRACT = contract_operations()


def test_the_contract_has_the_fifteen_operations_or_more() -> None:
    assert len(CONTRACT) >= 15


def test_every_operation_of_openapi_json_is_in_operations() -> None:
    assert sorted(set(CONTRACT) - set(OPERATIONS)) == []


def test_operations_holds_nothing_beyond_the_contract() -> None:
    assert sorted(set(OPERATIONS) - set(CONTRACT)) == []


def test_operations_is_json_serialisable_as_the_cross_sdk_test_reads_it() -> None:
    assert json.loads(json.dumps(architecture_portfolio.OPERATIONS)) == {k: list(v) for k, v in OPERATIONS.items()}


@pytest.mark.parametrize("operation_id", sorted(CONTRACT))
def test_each_operation_is_a_method_of_the_client_and_of_with_response(operation_id: str) -> None:
    resource, method = OPERATIONS[operation_id]
    client = Client("ap_pat_test")
    assert callable(getattr(getattr(client, resource), method))
    assert callable(getattr(getattr(client.with_response, resource), method))
    client.close()


def sample_call(function: Any) -> Tuple[List[Any], Dict[str, Any]]:
    """Arguments for every required parameter of `function`."""
    positional: List[Any] = []
    keywords: Dict[str, Any] = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.default is not inspect.Parameter.empty:
            continue
        if parameter.kind == inspect.Parameter.KEYWORD_ONLY:
            keywords[parameter.name] = f"sample-{parameter.name}"
        else:
            positional.append(f"sample-{parameter.name}")
    return positional, keywords


@pytest.mark.parametrize("operation_id", sorted(CONTRACT))
def test_each_method_sends_the_method_and_path_of_its_operation(operation_id: str) -> None:
    http_method, template, _operation = CONTRACT[operation_id]
    answer = {"GET": ok([]), "POST": ok({}, status=201), "DELETE": ok(None, status=204)}[http_method]
    server = Server(answer)
    resource, name = OPERATIONS[operation_id]
    with server.client() as client:
        function = getattr(getattr(client, resource), name)
        positional, keywords = sample_call(function)
        function(*positional, **keywords)
    (request,) = server.requests
    pattern = re.escape(httpx.URL(BASE_URL).path) + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
    assert request.method == http_method
    assert re.fullmatch(pattern, request.url.path), f"{request.url.path} does not match {template}"


@pytest.mark.parametrize("operation_id", sorted(CONTRACT))
def test_each_query_parameter_of_the_contract_is_a_keyword_of_its_method(operation_id: str) -> None:
    _http_method, _template, operation = CONTRACT[operation_id]
    resource, name = OPERATIONS[operation_id]
    client = Client("ap_pat_test")
    accepted = set(inspect.signature(getattr(getattr(client, resource), name)).parameters)
    client.close()
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "query" and parameter["name"] != "q":
            # `q`, the search text, is the method's first argument, `query`.
            assert parameter["name"] in accepted, f"{operation_id}: no keyword for the query parameter {parameter['name']}"


@pytest.mark.parametrize(
    "plain, with_response",
    [(Applications, ApplicationsWithResponse), (Functions, FunctionsWithResponse), (Invitations, InvitationsWithResponse)],
)
def test_the_plain_and_with_response_resources_take_the_same_arguments(plain: type, with_response: type) -> None:
    def methods(cls: type) -> Dict[str, List[inspect.Parameter]]:
        return {
            name: list(inspect.signature(member).parameters.values())
            for name, member in vars(cls).items()
            if inspect.isfunction(member) and not name.startswith("_")
        }

    assert methods(plain) == methods(with_response)
