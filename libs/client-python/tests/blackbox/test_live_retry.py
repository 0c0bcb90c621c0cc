"""Black-box: a 429 retried after Retry-After, then surfaced; skipped unless PORTFOLIO_RETRY_TOKEN is set.

    PORTFOLIO_BASE_URL            the API's base URL, /api/v1 included
    PORTFOLIO_RETRY_TOKEN         a token whose whole rate-limit window was spent in one burst
    PORTFOLIO_RETRY_BURST_END_MS  when that burst ended, in epoch milliseconds

The test waits for the burst to leave the window (up to a minute); test/blackbox/sdks.test.ts
runs it beside the TypeScript SDK's own, so that the two waits overlap.
"""

from __future__ import annotations

import os
import time
from typing import List, Tuple

import httpx
import pytest

from architecture_portfolio import Client, RateLimitError

BASE_URL = os.environ.get("PORTFOLIO_BASE_URL", "")
TOKEN = os.environ.get("PORTFOLIO_RETRY_TOKEN", "")
pytestmark = pytest.mark.skipif(not (BASE_URL and TOKEN), reason="PORTFOLIO_BASE_URL and PORTFOLIO_RETRY_TOKEN are not set")


@pytest.fixture
def sleeps() -> List[float]:
    """Overrides the unit tests' fake sleep: the client must really wait."""
    return []


def spend(token: str) -> None:
    """Spends what the token's window has left: its next requests answer 429 for a minute.

    A refusal alone does not prove the window full: entries the gateway reserved ahead and that
    lapsed unused are given back once the key has been quiet for 2 s, so spent means refused again
    after 4 quiet seconds (as test/blackbox/sdks.test.ts spends)."""
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}) as http:
        while True:
            while http.get(f"{BASE_URL}/referentiel/functions/stats").status_code != 429:
                pass
            time.sleep(4)
            if http.get(f"{BASE_URL}/referentiel/functions/stats").status_code == 429:
                return


class SpendingTransport(httpx.BaseTransport):
    """Before the client's retry goes out, lets the early burst leave the window and spends it
    again, so that the real gateway refuses the retry too."""

    def __init__(self, burst_end: float) -> None:
        self.inner = httpx.HTTPTransport()
        self.burst_end = burst_end
        self.calls: List[float] = []
        self.answers: List[Tuple[float, int, str]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(time.time())
        if self.answers:
            time.sleep(max(0.0, self.burst_end + 60.5 - time.time()))
            spend(TOKEN)
        response = self.inner.handle_request(request)
        self.answers.append((time.time(), response.status_code, response.headers.get("retry-after", "")))
        return response

    def close(self) -> None:
        self.inner.close()


def test_a_429_is_retried_after_retry_after_then_surfaced() -> None:
    transport = SpendingTransport(int(os.environ["PORTFOLIO_RETRY_BURST_END_MS"]) / 1000)
    # The retry's attempt holds in the transport up to a minute (the window leaving, then spent
    # again), inside the client's own bound on an attempt: 30 s by default, too short here.
    with Client(TOKEN, base_url=BASE_URL, max_retries=1, transport=transport, timeout=120) as client:
        with pytest.raises(RateLimitError) as raised:
            client.functions.stats()
    assert [status for _, status, _ in transport.answers] == [429, 429]
    retry_after = int(transport.answers[0][2])
    assert retry_after >= 1
    # The client itself waited Retry-After before asking again.
    assert transport.calls[1] - transport.answers[0][0] >= retry_after - 0.05
    assert raised.value.error_code == "RATE_LIMITED"
    assert raised.value.retry_after is not None and raised.value.retry_after >= 1
