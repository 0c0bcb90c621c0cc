"""How error answers and failed exchanges surface."""

from __future__ import annotations

import pickle
from typing import Type

import httpx
import pytest

from architecture_portfolio import (
    ApiError,
    ArchitecturePortfolioError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NetworkError,
    NetworkTimeoutError,
    NotFoundError,
    PermissionDeniedError,
    RateLimit,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    UnexpectedResponseError,
)
from support import Server, problem


@pytest.mark.parametrize(
    "status, error_code, error_class",
    [
        (400, "INVALID_REQUEST", BadRequestError),
        (401, "UNAUTHENTICATED", AuthenticationError),
        (403, "INSUFFICIENT_SCOPE", PermissionDeniedError),
        (404, "NOT_FOUND", NotFoundError),
        (409, "ALREADY_INVITED", ConflictError),
        (429, "RATE_LIMITED", RateLimitError),
        (500, "INTERNAL", ServerError),
        (503, "UNAVAILABLE", ServiceUnavailableError),
        (408, "REQUEST_TIMEOUT", ApiError),
        (413, "PAYLOAD_TOO_LARGE", ApiError),
        (415, "UNSUPPORTED_MEDIA_TYPE", ApiError),
    ],
)
def test_each_status_maps_to_its_class_with_the_problems_fields(status: int, error_code: str, error_class: Type[ApiError]) -> None:
    server = Server(problem(status, error_code, title="The title", detail="What went wrong", instance="/api/v1/x"))
    with server.client(max_retries=0) as client, pytest.raises(ApiError) as raised:
        client.functions.stats()
    error = raised.value
    assert type(error) is error_class
    assert error.status == status
    assert error.error_code == error_code
    assert error.title == "The title"
    assert error.detail == "What went wrong"
    assert error.instance == "/api/v1/x"
    assert error.type == f"http://localhost:8080/api/v1/errors/{error_code.lower().replace('_', '-')}"
    assert error.request_id == "req_err"
    assert error.rate_limit == RateLimit(limit=180, remaining=179, reset=1795340460)
    assert error.headers["content-type"] == "application/problem+json"
    assert isinstance(error.body, dict) and error.body["errorCode"] == error_code
    assert str(error) == f"{status} {error_code}: What went wrong (request id req_err)"


def test_the_class_tree() -> None:
    assert issubclass(ServiceUnavailableError, ServerError)
    for cls in (BadRequestError, AuthenticationError, PermissionDeniedError, NotFoundError, ConflictError, RateLimitError, ServerError):
        assert issubclass(cls, ApiError)
    assert issubclass(NetworkTimeoutError, NetworkError)
    assert not issubclass(NetworkError, ApiError)
    for cls in (ApiError, NetworkError, UnexpectedResponseError):
        assert issubclass(cls, ArchitecturePortfolioError)


@pytest.mark.parametrize("status, error_class", [(502, ServerError), (504, ServerError), (418, ApiError), (302, ApiError)])
def test_other_statuses_map_by_range(status: int, error_class: Type[ApiError]) -> None:
    server = Server(httpx.Response(status, headers={"content-type": "text/plain"}, content=b"nope"))
    with server.client() as client, pytest.raises(ApiError) as raised:
        client.functions.stats()
    assert type(raised.value) is error_class and raised.value.status == status


def test_a_duplicate_invitation_is_an_api_error_whose_error_code_is_already_invited() -> None:
    server = Server(problem(409, "ALREADY_INVITED", title="Conflict", detail="A PENDING invitation exists for a@corp.example"))
    with server.client() as client, pytest.raises(ConflictError) as raised:
        client.invitations.create(email="a@corp.example", arb_role="viewer")
    assert raised.value.error_code == "ALREADY_INVITED"
    assert len(server.requests) == 1


def test_a_non_json_error_body_still_maps_by_status_without_error_code() -> None:
    html = b"<html><body>Bad gateway</body></html>"
    server = Server(httpx.Response(502, headers={"content-type": "text/html; charset=utf-8"}, content=html))
    with server.client() as client, pytest.raises(ServerError) as raised:
        client.functions.get("7d3c2f4e-0b1a-4c5d-9e8f-1a2b3c4d5e6f")
    error = raised.value
    assert (error.status, error.error_code, error.title, error.detail, error.request_id, error.rate_limit) == (
        502, None, None, None, None, None
    )
    assert error.body == html.decode()
    assert str(error) == "502 Bad Gateway: <html><body>Bad gateway</body></html>"


def test_a_non_json_404_is_still_a_not_found_error() -> None:
    server = Server(httpx.Response(404, headers={"content-type": "text/plain"}, content=b"Not Found"))
    with server.client() as client, pytest.raises(NotFoundError) as raised:
        client.applications.get("CRM-01")
    assert raised.value.error_code is None and raised.value.body == "Not Found"


def test_an_empty_error_body_gives_the_reason_phrase() -> None:
    server = Server(httpx.Response(403))
    with server.client() as client, pytest.raises(PermissionDeniedError) as raised:
        client.invitations.list()
    assert raised.value.body is None and str(raised.value) == "403 Forbidden: Forbidden"


def test_a_json_error_body_that_is_not_a_problem_keeps_its_body() -> None:
    server = Server(httpx.Response(400, json=["unexpected"]))
    with server.client() as client, pytest.raises(BadRequestError) as raised:
        client.functions.search("x")
    assert raised.value.error_code is None and raised.value.body == ["unexpected"]


def test_an_error_body_in_an_unknown_charset_is_read_as_utf8() -> None:
    server = Server(httpx.Response(500, headers={"content-type": "text/plain; charset=no-such-codec"}, content="déjà".encode()))
    with server.client() as client, pytest.raises(ServerError) as raised:
        client.functions.tree()
    assert raised.value.body == "déjà"


@pytest.mark.parametrize("status, error_class", [(429, RateLimitError), (503, ServiceUnavailableError)])
def test_retry_after_is_read_on_429_and_503(status: int, error_class: Type[ApiError]) -> None:
    server = Server(problem(status, "X", headers={"retry-after": "7"}))
    with server.client(max_retries=0) as client, pytest.raises(error_class) as raised:
        client.functions.stats()
    assert raised.value.retry_after == 7  # type: ignore[attr-defined]


def test_retry_after_may_be_an_http_date() -> None:
    when = httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})
    server = Server(problem(429, "RATE_LIMITED", headers=dict(when)))
    with server.client(max_retries=0) as client, pytest.raises(RateLimitError) as raised:
        client.functions.stats()
    # A date in the past means "now".
    assert raised.value.retry_after == 0


def test_an_unreadable_retry_after_is_none() -> None:
    server = Server(problem(429, "RATE_LIMITED", headers={"retry-after": "soon"}))
    with server.client(max_retries=0) as client, pytest.raises(RateLimitError) as raised:
        client.functions.stats()
    assert raised.value.retry_after is None


def test_a_connection_failure_is_a_network_error_not_an_api_error() -> None:
    server = Server(httpx.ConnectError("Connection refused"))
    with server.client(max_retries=0) as client, pytest.raises(NetworkError) as raised:
        client.functions.stats()
    assert not isinstance(raised.value, ApiError) and not isinstance(raised.value, NetworkTimeoutError)
    assert isinstance(raised.value.__cause__, httpx.ConnectError)


def test_a_body_cut_short_is_a_network_error() -> None:
    class Truncated(httpx.SyncByteStream):
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield b'[{"code": '
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    server = Server(httpx.Response(200, headers={"content-type": "application/json"}, stream=Truncated()))
    with server.client(max_retries=0) as client, pytest.raises(NetworkError) as raised:
        client.applications.list()
    assert isinstance(raised.value.__cause__, httpx.RemoteProtocolError)


def test_a_success_whose_body_is_not_json_is_an_unexpected_response() -> None:
    # What a base URL missing its /api/v1 typically gets: the web application's HTML.
    server = Server(httpx.Response(200, headers={"content-type": "text/html"}, content=b"<!doctype html><title>Portfolio</title>"))
    with server.client() as client, pytest.raises(UnexpectedResponseError) as raised:
        client.functions.stats()
    assert raised.value.status == 200 and raised.value.body.startswith("<!doctype html>")
    assert "/api/v1" in str(raised.value)
    assert len(server.requests) == 1


def test_a_list_endpoint_answering_an_object_is_an_unexpected_response() -> None:
    server = Server(httpx.Response(200, json={"items": []}))
    with server.client() as client, pytest.raises(UnexpectedResponseError, match="where a list was expected"):
        client.invitations.members()


def test_a_retry_after_of_non_ascii_digits_is_none_not_a_crash() -> None:
    # str.isdigit() holds for "²", which int() refuses; a header arrives as Latin-1.
    response = httpx.Response(429, headers=[(b"retry-after", b"\xb2"), (b"content-type", b"application/problem+json")], content=b"{}")
    server = Server(response)
    with server.client(max_retries=0) as client, pytest.raises(RateLimitError) as raised:
        client.functions.stats()
    assert raised.value.retry_after is None


def test_rate_limit_headers_are_read_as_digits_only_as_in_typescript() -> None:
    for value in ["-1", "+5", "1_000", "²"]:
        headers = httpx.Headers([(b"x-ratelimit-limit", b"180"), (b"x-ratelimit-remaining", value.encode("latin-1")), (b"x-ratelimit-reset", b"9")])
        assert RateLimit.from_headers(headers) is None, value
    assert RateLimit.from_headers(httpx.Headers({"x-ratelimit-limit": "180", "x-ratelimit-remaining": " 7 ", "x-ratelimit-reset": "9"})) == RateLimit(180, 7, 9)


@pytest.mark.parametrize("status", [400, 404, 409, 429, 500, 503, 418])
def test_an_api_error_survives_pickling_as_from_a_worker_process(status: int) -> None:
    server = Server(problem(status, "NOT_FOUND", headers={"retry-after": "3"}))
    with server.client(max_retries=0) as client, pytest.raises(ApiError) as raised:
        client.applications.get("CRM-01")
    error = raised.value
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert vars(copy) == vars(error)
    assert (copy.status, copy.error_code, copy.request_id, copy.headers["retry-after"]) == (status, "NOT_FOUND", "req_err", "3")


def test_the_other_errors_survive_pickling_too() -> None:
    for error in [
        NetworkTimeoutError("GET x took more than 1 s"),
        UnexpectedResponseError("not JSON", status=200, headers=httpx.Headers({"a": "b"}), body="<html>"),
        ArchitecturePortfolioError("plain"),
    ]:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and copy.args == error.args and vars(copy) == vars(error)
