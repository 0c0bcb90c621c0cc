"""Every Python example of README.md runs, against a fake API answering what the real one would."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import httpx
import pytest

import architecture_portfolio
from samples import APPLICATION, CHANGE, FUNCTION, INVITATION, MEMBER, POSI, STATS, TREE
from support import RATE_HEADERS, problem

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)

ANSWERS: Dict[str, Any] = {
    "/referentiel/applications": [APPLICATION],
    "/referentiel/applications/CRM-01": APPLICATION,
    "/referentiel/applications/CRM-01/changes": [CHANGE],
    "/referentiel/functions": TREE,
    "/referentiel/functions/flat": [FUNCTION],
    "/referentiel/functions/posi": POSI,
    "/referentiel/functions/search": [FUNCTION],
    "/referentiel/functions/stats": STATS,
    "/referentiel/functions/by-application/CRM-01": [FUNCTION],
    f"/referentiel/functions/{FUNCTION['id']}": FUNCTION,
    "/tenant/invitations": [INVITATION],
    "/tenant/invitations/members": [MEMBER],
}


class FakeApi:
    """Answers every read with a sample, creates one invitation then refuses the same address
    with ALREADY_INVITED, as the API does, and records what it was asked."""

    def __init__(self) -> None:
        self.requests: List[httpx.Request] = []
        self.invited: List[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path[len("/api/v1"):]
        headers = {**RATE_HEADERS, "x-request-id": "req_readme"}
        if request.method == "DELETE":
            return httpx.Response(204, headers=headers)
        if request.method == "POST":
            email = json.loads(request.content)["email"]
            if email in self.invited:
                return problem(409, "ALREADY_INVITED")
            self.invited.append(email)
            return httpx.Response(201, headers=headers, json=INVITATION)
        if path not in ANSWERS:
            return problem(404, "NOT_FOUND")
        return httpx.Response(200, headers=headers, json=ANSWERS[path])


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block {index + 1}" for index in range(len(BLOCKS))])
def test_each_example_runs(block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeApi()
    real_client = architecture_portfolio.Client

    def client(*args: Any, **options: Any) -> architecture_portfolio.Client:
        options["transport"] = httpx.MockTransport(api)
        return real_client(*args, **options)

    monkeypatch.setattr(architecture_portfolio, "Client", client)
    monkeypatch.setenv("PORTFOLIO_TOKEN", "ap_pat_readme")
    # Each example may use the `Client`, `client` and `token` the sections before it made.
    namespace: Dict[str, Any] = {"token": "ap_pat_readme", "Client": client, "client": client("ap_pat_readme")}
    if "invitations.create" in block and "except" in block:
        # The error example meets the duplicate it is about.
        namespace["client"].invitations.create(email="new.architect@corp.example", arb_role="architect")
    exec(compile(block, str(README), "exec"), namespace)
    assert all(request.headers["authorization"] == "Bearer ap_pat_readme" for request in api.requests)
