from __future__ import annotations

from typing import Iterator, List

import pytest

from architecture_portfolio import _retry


@pytest.fixture(autouse=True)
def sleeps(monkeypatch: pytest.MonkeyPatch) -> Iterator[List[float]]:
    """Every wait between retries, recorded instead of slept: no test waits for a back-off."""
    asked: List[float] = []
    monkeypatch.setattr(_retry, "sleep", asked.append)
    yield asked
