from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Generic, Optional, TypeVar

import httpx

T = TypeVar("T")


@dataclass(frozen=True)
class RateLimit:
    """The token's rate-limit budget, from the `X-RateLimit-*` headers of one answer."""

    limit: int
    """Requests allowed in any 60-second window."""
    remaining: int
    """Requests still allowed in the current window."""
    reset: int
    """UTC epoch seconds at which one more request becomes possible."""

    @classmethod
    def from_headers(cls, headers: httpx.Headers) -> Optional[RateLimit]:
        """The budget, or None when any of the three headers is missing or not an integer."""
        values = [_integer(headers.get(name)) for name in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")]
        limit, remaining, reset = values
        if limit is None or remaining is None or reset is None:
            return None
        return cls(limit=limit, remaining=remaining, reset=reset)


@dataclass(frozen=True)
class ApiResponse(Generic[T]):
    """A successful answer: the parsed result with what the HTTP response said about it."""

    data: T
    """What the plain method would have returned."""
    status: int
    headers: httpx.Headers
    rate_limit: Optional[RateLimit]
    request_id: Optional[str]
    """`X-Request-Id`, to quote when asking for support."""


def _integer(value: Optional[str]) -> Optional[int]:
    # Digits only, as the TypeScript client reads them: int() would also take "-1", "+1" or "1_0".
    if value is None or not re.fullmatch(r"[0-9]+", value.strip()):
        return None
    return int(value.strip())
