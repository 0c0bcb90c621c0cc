"""Runs every case of libs/client-fixtures/cases.json, the contract shared with the TypeScript SDK."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, Dict, List

import httpx
import pytest

import architecture_portfolio
from architecture_portfolio import ArchitecturePortfolioError, Client, Page

CASES_PATH = Path(__file__).resolve().parents[2] / "client-fixtures" / "cases.json"
TOKEN = "ap_pat_test"
BASE_URL = "https://api.example.test/api/v1"
CLIENT_OPTIONS = {"maxRetries": "max_retries", "headers": "headers"}


def load_cases(path: Path) -> List[Dict[str, Any]]:
    cases: List[Dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return cases


def snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda letter: "_" + letter.group(0).lower(), name)


def wire_response(answer: Dict[str, Any]) -> httpx.Response:
    headers: Dict[str, str] = answer.get("headers", {})
    body = answer.get("body")
    content_type = next((value for name, value in headers.items() if name.lower() == "content-type"), "")
    if body is None:
        content = b""
    elif isinstance(body, str) and "json" not in content_type:
        content = body.encode("utf-8")
    else:
        content = json.dumps(body).encode("utf-8")
    return httpx.Response(answer["status"], headers=headers, content=content)


def check_request(request: httpx.Request, expected: Dict[str, Any], label: str) -> None:
    raw_path = request.url.raw_path.decode("ascii").split("?", 1)[0]
    prefix = httpx.URL(BASE_URL).raw_path.decode("ascii")
    assert raw_path.startswith(prefix + "/"), f"{label}: {raw_path} is not under the base URL"
    assert request.method == expected["method"], label
    assert raw_path[len(prefix):] == expected["path"], label
    pairs = request.url.params.multi_items()
    assert len(pairs) == len(dict(pairs)), f"{label}: a query parameter is repeated in {request.url}"
    assert dict(pairs) == expected["query"], label
    for name, value in expected.get("headers", {}).items():
        assert request.headers.get(name) == value, f"{label}: header {name}"
    sent = json.loads(request.content) if request.content else None
    assert sent == expected["body"], label


def run_case(case: Dict[str, Any], sleeps: List[float]) -> None:
    """Plays one case: the SDK must send each expected request in order and end as `expect` says."""
    call = case["call"]
    exchanges: List[Dict[str, Any]] = case["exchanges"]
    received: List[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        label = f"request {len(received) + 1} of {case['name']!r}"
        assert len(received) < len(exchanges), f"{label}: the case expects only {len(exchanges)}"
        check_request(request, exchanges[len(received)]["request"], label)
        received.append(request)
        return wire_response(exchanges[len(received) - 1]["response"])

    unknown = set(call.get("client", {})) - set(CLIENT_OPTIONS)
    assert not unknown, f"client options this runner does not translate yet: {unknown}"
    options = {CLIENT_OPTIONS[name]: value for name, value in call.get("client", {}).items()}
    with Client(TOKEN, base_url=BASE_URL, transport=httpx.MockTransport(handle), **options) as client:
        method = getattr(getattr(client, call["resource"]), snake(call["method"]))
        arguments = {snake(name): value for name, value in call.get("options", {}).items()}
        expect = case["expect"]
        def invoke() -> Any:
            result = method(*call["args"], **arguments)
            return list(result.auto_paging_iter()) if call.get("paginate") else result

        if "error" in expect:
            with pytest.raises(ArchitecturePortfolioError) as raised:
                invoke()
            error = raised.value
            wanted = expect["error"]
            assert type(error).__name__ == wanted["class"]
            assert isinstance(error, getattr(architecture_portfolio, wanted["class"]))
            for field, value in wanted.items():
                if field != "class":
                    assert getattr(error, snake(field)) == value, field
        else:
            result = invoke()
            assert (list(result) if isinstance(result, Page) else result) == expect["result"]
    assert len(received) == len(exchanges), f"sent {len(received)} requests, the case expects {len(exchanges)}"
    # Every answer but the last that is not a success is retried (n counting the retries of one
    # request); a success before the last is a page of a `paginate` case.
    retried: List[Dict[str, Any]] = []
    retry_numbers: List[int] = []
    retry = 0
    for exchange in exchanges[:-1]:
        if 200 <= exchange["response"]["status"] < 300:
            retry = 0
            continue
        retried.append(exchange)
        retry_numbers.append(retry)
        retry += 1
    assert len(sleeps) == len(retried), "one wait before each retry"
    for retry, exchange, slept in zip(retry_numbers, retried, sleeps):
        headers = {name.lower(): value for name, value in exchange["response"].get("headers", {}).items()}
        retry_after = headers.get("retry-after", "")
        wait = exchange.get("wait", int(retry_after) if re.fullmatch(r"[0-9]+", retry_after) else "backoff")
        if wait == "backoff":
            assert 0 <= slept < min(8.0, 0.5 * 2**retry), f"wait {retry + 1}: {slept} s is no back-off"
        else:
            assert slept == float(wait), f"wait {retry + 1}"


CASES = load_cases(CASES_PATH)


def test_the_cases_file_has_cases() -> None:
    assert len(CASES) >= 15


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_contract_case(case: Dict[str, Any], sleeps: List[float]) -> None:
    run_case(case, sleeps)


# The runner checks itself: each of these alterations of a passing case must make it fail.
STATS_CASE: Dict[str, Any] = {
    "name": "stats after a 429",
    "operationId": None,
    "call": {"resource": "functions", "method": "stats", "args": []},
    "exchanges": [
        {
            "request": {"method": "GET", "path": "/referentiel/functions/stats", "query": {},
                        "headers": {"authorization": "Bearer ap_pat_test"}, "body": None},
            "response": {"status": 429, "headers": {"content-type": "application/problem+json", "retry-after": "3"},
                         "body": {"status": 429, "errorCode": "RATE_LIMITED"}},
        },
        {
            "request": {"method": "GET", "path": "/referentiel/functions/stats", "query": {},
                        "headers": {"authorization": "Bearer ap_pat_test"}, "body": None},
            "response": {"status": 200, "headers": {"content-type": "application/json"}, "body": {"functionCount": 1}},
        },
    ],
    "expect": {"result": {"functionCount": 1}},
}


def altered(change: str) -> Dict[str, Any]:
    case = copy.deepcopy(STATS_CASE)
    first = case["exchanges"][0]
    if change == "path":
        first["request"]["path"] = "/referentiel/functions"
    elif change == "query":
        first["request"]["query"] = {"limit": "1"}
    elif change == "header":
        first["request"]["headers"]["x-team"] = "billing"
    elif change == "body":
        first["request"]["body"] = {"email": "a@corp.example"}
    elif change == "method":
        first["request"]["method"] = "POST"
    elif change == "result":
        case["expect"] = {"result": {"functionCount": 2}}
    elif change == "error":
        case["expect"] = {"error": {"class": "RateLimitError", "status": 429, "errorCode": "RATE_LIMITED"}}
    elif change == "fewer exchanges":
        case["exchanges"] = case["exchanges"][:1]
    elif change == "more exchanges":
        case["exchanges"].append(copy.deepcopy(case["exchanges"][-1]))
    return case


def test_the_runner_passes_the_unaltered_case(sleeps: List[float]) -> None:
    run_case(STATS_CASE, sleeps)
    assert sleeps == [3.0]


@pytest.mark.parametrize(
    "change", ["path", "query", "header", "body", "method", "result", "error", "fewer exchanges", "more exchanges"]
)
def test_the_runner_fails_a_case_the_sdk_does_not_meet(change: str, sleeps: List[float]) -> None:
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        run_case(altered(change), sleeps)


def test_the_runner_fails_when_the_sdk_waits_other_than_retry_after(monkeypatch: pytest.MonkeyPatch, sleeps: List[float]) -> None:
    case = copy.deepcopy(STATS_CASE)
    case["exchanges"][0]["response"]["headers"]["retry-after"] = "4"
    real_retry_after = architecture_portfolio._retry.retry_after
    monkeypatch.setattr(architecture_portfolio._retry, "retry_after", lambda headers: (real_retry_after(headers) or 0) - 1)
    with pytest.raises(AssertionError):
        run_case(case, sleeps)
