"""One version everywhere: the package's metadata, the code (User-Agent), the changelog."""

from __future__ import annotations

import re
from pathlib import Path

from architecture_portfolio import __version__

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_follows_the_api_release_everywhere() -> None:
    # tomllib is Python 3.11+; the line is simple enough to read without it.
    declared = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert declared is not None
    assert declared.group(1) == __version__ == "0.1.87"
    latest = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert latest is not None and latest.group(1) == __version__
    assert f"architecture-portfolio-python/{__version__}" in (ROOT / "README.md").read_text(encoding="utf-8")
