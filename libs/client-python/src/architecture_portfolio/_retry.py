"""When and how long the client waits before trying a request again.

`sleep` and `jitter` are looked up on this module at each use, so tests can replace them
(`monkeypatch.setattr(architecture_portfolio._retry, "sleep", fake)`) instead of waiting.
"""

from __future__ import annotations

import math
import random
import re
import time
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Optional

import httpx

RETRY_AFTER_MAX = 60
"""A server asking for a longer wait than this (seconds) gets its error surfaced, not a sleeping client."""
BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0
RETRIED_STATUSES = frozenset({429, 503})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def jitter(ceiling: float) -> float:
    """A uniformly random wait between 0 and `ceiling` ("full jitter")."""
    return random.uniform(0.0, ceiling)


def backoff(retry: int) -> float:
    """The wait before retry number `retry` (0 for the first) when the server gave no Retry-After."""
    return jitter(min(BACKOFF_CAP, BACKOFF_BASE * 2 ** retry))


def retry_after(headers: httpx.Headers) -> Optional[int]:
    """`Retry-After` in whole seconds (delay-seconds or an HTTP date), or None when absent or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    # ASCII digits only: str.isdigit() also accepts "²", which int() refuses.
    if re.fullmatch(r"[0-9]+", value):
        return int(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0, math.ceil((when - datetime.now(timezone.utc)).total_seconds()))
