"""The retry rule: what is retried, how long the client waits, when it gives up."""

from __future__ import annotations

from typing import List

import httpx
import pytest

from architecture_portfolio import (
    BadRequestError,
    ConflictError,
    NetworkError,
    NetworkTimeoutError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    _retry,
)
from samples import APPLICATION, INVITATION, STATS
from support import Server, ok, problem


def rate_limited(retry_after: str) -> httpx.Response:
    return problem(429, "RATE_LIMITED", headers={"retry-after": retry_after, "x-ratelimit-remaining": "0"})


def unavailable(retry_after: str = "1") -> httpx.Response:
    return problem(503, "UNAVAILABLE", headers={"retry-after": retry_after})


def test_a_429_is_retried_after_its_retry_after(sleeps: List[float]) -> None:
    server = Server(rate_limited("2"), ok(APPLICATION))
    with server.client() as client:
        assert client.applications.get("CRM-01") == APPLICATION
    assert sleeps == [2.0]
    assert len(server.requests) == 2


def test_a_503_is_retried_after_its_retry_after_even_for_a_post(sleeps: List[float]) -> None:
    server = Server(unavailable("3"), ok(INVITATION, status=201))
    with server.client() as client:
        assert client.invitations.create(email="a@corp.example", arb_role="viewer") == INVITATION
    assert sleeps == [3.0]
    assert [r.method for r in server.requests] == ["POST", "POST"]
    assert server.requests[0].content == server.requests[1].content


def test_when_retries_are_exhausted_the_last_error_surfaces(sleeps: List[float]) -> None:
    server = Server(unavailable("1"), unavailable("1"), problem(503, "UNAVAILABLE", headers={"retry-after": "1"}, detail="third"))
    with server.client() as client, pytest.raises(ServiceUnavailableError) as raised:
        client.functions.tree()
    assert raised.value.detail == "third"
    assert sleeps == [1.0, 1.0]
    assert len(server.requests) == 3


def test_max_retries_bounds_the_extra_attempts(sleeps: List[float]) -> None:
    server = Server(*[rate_limited("1") for _ in range(5)])
    with server.client(max_retries=4) as client, pytest.raises(RateLimitError):
        client.functions.stats()
    assert len(server.requests) == 5 and len(sleeps) == 4


def test_max_retries_zero_surfaces_the_first_429_with_retry_after_and_rate_limit(sleeps: List[float]) -> None:
    server = Server(rate_limited("7"))
    with server.client(max_retries=0) as client, pytest.raises(RateLimitError) as raised:
        client.functions.stats()
    assert raised.value.retry_after == 7
    assert raised.value.rate_limit is not None and raised.value.rate_limit.remaining == 0
    assert sleeps == []


def test_a_retry_after_above_60_seconds_is_not_waited_for(sleeps: List[float]) -> None:
    server = Server(rate_limited("120"))
    with server.client() as client, pytest.raises(RateLimitError) as raised:
        client.applications.list()
    assert raised.value.retry_after == 120
    assert sleeps == [] and len(server.requests) == 1


def test_a_retry_after_of_exactly_60_seconds_is_waited_for(sleeps: List[float]) -> None:
    server = Server(rate_limited("60"), ok(STATS))
    with server.client() as client:
        client.functions.stats()
    assert sleeps == [60.0]


def test_without_retry_after_the_wait_backs_off_exponentially_with_full_jitter(
    sleeps: List[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    ceilings: List[float] = []

    def highest(ceiling: float) -> float:
        ceilings.append(ceiling)
        return ceiling

    monkeypatch.setattr(_retry, "jitter", highest)
    server = Server(*[problem(503, "UNAVAILABLE") for _ in range(7)], ok(STATS))
    with server.client(max_retries=7) as client:
        client.functions.stats()
    assert ceilings == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert sleeps == ceilings


def test_the_jitter_draws_between_zero_and_the_ceiling() -> None:
    draws = [_retry.backoff(3) for _ in range(500)]
    assert all(0.0 <= draw <= 4.0 for draw in draws)
    # Full jitter spreads the waits over the whole range rather than clustering at the ceiling.
    assert min(draws) < 1.0 and max(draws) > 3.0


def test_an_unreadable_retry_after_falls_back_to_back_off(sleeps: List[float], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_retry, "jitter", lambda ceiling: ceiling / 2)
    server = Server(rate_limited("later"), ok(STATS))
    with server.client() as client:
        client.functions.stats()
    assert sleeps == [0.25]


@pytest.mark.parametrize(
    "answer, error_class",
    [
        (problem(500, "INTERNAL"), ServerError),
        (problem(502, "BAD_GATEWAY"), ServerError),
        (problem(400, "INVALID_REQUEST"), BadRequestError),
        (problem(409, "INVITATION_NOT_PENDING"), ConflictError),
    ],
)
def test_other_error_statuses_are_not_retried(answer: httpx.Response, error_class: type, sleeps: List[float]) -> None:
    server = Server(answer)
    with server.client() as client, pytest.raises(error_class):
        client.invitations.revoke("3f2e1d0c-bbaa-4998-8776-655443322110")
    assert len(server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("method", ["get", "delete"])
def test_a_connection_error_is_retried_for_idempotent_methods(method: str, sleeps: List[float], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_retry, "jitter", lambda ceiling: ceiling)
    success = ok(STATS) if method == "get" else ok(None, status=204)
    server = Server(httpx.ConnectError("Connection refused"), httpx.ReadError("Connection reset by peer"), success)
    with server.client() as client:
        if method == "get":
            assert client.functions.stats() == STATS
        else:
            client.invitations.remove_member("auth0|x")
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


def test_a_connection_error_on_a_post_is_not_retried(sleeps: List[float]) -> None:
    # The invitation may have been created before the connection broke: sending it again could
    # create a second one, so the caller decides.
    server = Server(httpx.ConnectError("Connection reset by peer"))
    with server.client() as client, pytest.raises(NetworkError):
        client.invitations.create(email="a@corp.example", arb_role="viewer")
    assert len(server.requests) == 1 and sleeps == []


def test_a_connection_error_surfaces_once_retries_are_exhausted(sleeps: List[float]) -> None:
    server = Server(*[httpx.ConnectError(f"refused {n}") for n in range(3)])
    with server.client() as client, pytest.raises(NetworkError) as raised:
        client.applications.list()
    assert "refused 2" in str(raised.value)
    assert len(server.requests) == 3 and len(sleeps) == 2


def test_a_timeout_is_not_retried(sleeps: List[float]) -> None:
    server = Server(httpx.ReadTimeout("timed out"))
    with server.client() as client, pytest.raises(NetworkTimeoutError):
        client.functions.tree()
    assert len(server.requests) == 1 and sleeps == []


def test_a_retry_resends_the_same_request(sleeps: List[float]) -> None:
    server = Server(rate_limited("1"), ok([]))
    with server.client(headers={"x-team": "billing"}) as client:
        client.applications.list(criticality="LOW", limit=5)
    first, second = server.requests
    assert first.url == second.url
    assert first.headers == second.headers


@pytest.mark.parametrize("max_retries", [-1, 1.5, True])
def test_max_retries_must_be_a_non_negative_integer(max_retries: object) -> None:
    with pytest.raises(ValueError, match="max_retries"):
        Server().client(max_retries=max_retries)
