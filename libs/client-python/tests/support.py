"""Helpers of the unit tests: a recording fake server and canned answers."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Union

import httpx

from architecture_portfolio import Client

BASE_URL = "https://api.example.test/api/v1"
TOKEN = "ap_pat_test"
RATE_HEADERS = {"x-ratelimit-limit": "180", "x-ratelimit-remaining": "179", "x-ratelimit-reset": "1795340460"}

Answer = Union[httpx.Response, Exception, Callable[[httpx.Request], httpx.Response]]


class Server:
    """An httpx handler answering the queued answers in order and recording each request."""

    def __init__(self, *answers: Answer) -> None:
        self.answers: List[Answer] = list(answers)
        self.requests: List[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return answer
        return answer(request)

    def client(self, **options: Any) -> Client:
        options.setdefault("base_url", BASE_URL)
        return Client(TOKEN, transport=httpx.MockTransport(self), **options)


def ok(body: Any = None, status: int = 200, headers: Optional[Dict[str, str]] = None) -> httpx.Response:
    merged = {**RATE_HEADERS, "x-request-id": "req_1", **(headers or {})}
    if body is None:
        return httpx.Response(status, headers=merged)
    return httpx.Response(status, headers={"content-type": "application/json", **merged}, content=json.dumps(body).encode())


def problem(status: int, error_code: str, headers: Optional[Dict[str, str]] = None, **fields: Any) -> httpx.Response:
    body = {
        "type": f"http://localhost:8080/api/v1/errors/{error_code.lower().replace('_', '-')}",
        "title": fields.pop("title", error_code.replace("_", " ").capitalize()),
        "status": status,
        "detail": fields.pop("detail", f"detail of {error_code}"),
        "instance": fields.pop("instance", "/api/v1/somewhere"),
        "errorCode": error_code,
        **fields,
    }
    merged = {"content-type": "application/problem+json", **RATE_HEADERS, "x-request-id": "req_err", **(headers or {})}
    return httpx.Response(status, headers=merged, content=json.dumps(body).encode())


def query(request: httpx.Request) -> Dict[str, str]:
    pairs = request.url.params.multi_items()
    assert len(pairs) == len({name for name, _ in pairs}), f"repeated query parameter in {request.url}"
    return dict(pairs)


def path(request: httpx.Request) -> str:
    """The request's path after the base URL's, percent-encoded as sent."""
    raw = request.url.raw_path.decode("ascii").split("?", 1)[0]
    prefix = httpx.URL(BASE_URL).raw_path.decode("ascii")
    assert raw.startswith(prefix + "/"), raw
    return raw[len(prefix):]


def body(request: httpx.Request) -> Any:
    return json.loads(request.content) if request.content else None
