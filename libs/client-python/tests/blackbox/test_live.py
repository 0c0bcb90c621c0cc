"""Black-box run of the SDK against a real deployment; skipped unless PORTFOLIO_BASE_URL is set.

    PORTFOLIO_BASE_URL     the API's base URL, /api/v1 included
    PORTFOLIO_WRITE_TOKEN  a write-scope token of a tenant-admin
    PORTFOLIO_READ_TOKEN   a read-scope token (its holder is tenant-admin too)
    PORTFOLIO_APP_CODE     an existing application linked to at least one function
    PORTFOLIO_FUNCTION_ID  an existing function's id
    PORTFOLIO_OTHER_SUB    the user sub of a removable non-admin member, or empty
    PORTFOLIO_SPENT_TOKEN  a token whose rate-limit budget was just spent (every call answers 429)

    cd libs/client-python && PORTFOLIO_BASE_URL=... /usr/bin/python3 -m pytest -q tests/blackbox
"""

from __future__ import annotations

import os
import uuid
from typing import Iterator, List, Sequence

import httpx
import pytest

from architecture_portfolio import (
    Application,
    AuthenticationError,
    BusinessFunction,
    ChangeLogEntry,
    Client,
    ConflictError,
    Invitation,
    Member,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
)

BASE_URL = os.environ.get("PORTFOLIO_BASE_URL", "")
pytestmark = pytest.mark.skipif(not BASE_URL, reason="PORTFOLIO_BASE_URL is not set: no live system to test against")


def env(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        pytest.fail(f"{name} must be set for the live tests")
    return value


@pytest.fixture
def sleeps() -> List[float]:
    """Overrides the unit tests' fake sleep: against a real server the client really waits."""
    return []


@pytest.fixture
def reader() -> Iterator[Client]:
    with Client(env("PORTFOLIO_READ_TOKEN"), base_url=BASE_URL) as client:
        yield client


@pytest.fixture
def writer() -> Iterator[Client]:
    with Client(env("PORTFOLIO_WRITE_TOKEN"), base_url=BASE_URL) as client:
        yield client


def test_get_application(reader: Client) -> None:
    code = env("PORTFOLIO_APP_CODE")
    application = reader.applications.get(code)
    assert application["code"] == code
    assert Application.__required_keys__ <= set(application)


def test_list_applications_lists_active_ones_unless_told_otherwise(reader: Client) -> None:
    applications = reader.applications.list()
    assert applications, "the tenant has active applications"
    assert {application["status"] for application in applications} == {"ACTIVE"}


def test_list_applications_with_filters(reader: Client) -> None:
    application = reader.applications.get(env("PORTFOLIO_APP_CODE"))
    filtered = reader.applications.list(
        status=application["status"],
        criticality=application["criticality"],
        data_class=application["dataClassification"],
    )
    assert application["code"] in [item["code"] for item in filtered]
    for item in filtered:
        assert (item["status"], item["criticality"], item["dataClassification"]) == (
            application["status"], application["criticality"], application["dataClassification"]
        )
    regulations = [token for token in application["regulations"].split(",") if token]
    if regulations:
        regulated = reader.applications.list(status=application["status"], regulation=regulations[0])  # type: ignore[arg-type]
        assert application["code"] in [item["code"] for item in regulated]
        assert all(regulations[0] in item["regulations"].split(",") for item in regulated)


def test_application_changes(reader: Client) -> None:
    code = env("PORTFOLIO_APP_CODE")
    changes = reader.applications.changes(code, limit=5)
    assert len(changes) <= 5
    assert all(entry["applicationCode"] == code and ChangeLogEntry.__required_keys__ <= set(entry) for entry in changes)
    stamps = [entry["changedAt"] for entry in changes]
    assert stamps == sorted(stamps, reverse=True), "newest first"


def test_function_tree_flat_and_posi(reader: Client) -> None:
    function_id = env("PORTFOLIO_FUNCTION_ID")
    tree = reader.functions.tree()
    assert tree and all(node["parentId"] is None and isinstance(node["children"], list) for node in tree)
    flat = reader.functions.flat()
    assert function_id in [function["id"] for function in flat]
    assert all(BusinessFunction.__required_keys__ <= set(function) for function in flat)
    posi = reader.functions.posi()
    assert posi and all(isinstance(node["applications"], list) for node in posi)


def test_get_and_search_function(reader: Client) -> None:
    function = reader.functions.get(env("PORTFOLIO_FUNCTION_ID"))
    assert function["id"] == env("PORTFOLIO_FUNCTION_ID")
    found = reader.functions.search(function["code"])
    assert function["id"] in [item["id"] for item in found]


def test_functions_by_application(reader: Client) -> None:
    code = env("PORTFOLIO_APP_CODE")
    functions = reader.functions.by_application(code)
    assert functions, f"{code} is linked to at least one function"
    assert all(code in function["applicationCodes"] for function in functions)


def test_stats(reader: Client) -> None:
    stats = reader.functions.stats()
    assert stats["functionCount"] >= 1 and stats["applicationCount"] >= 1
    assert isinstance(stats["applicationsByStatus"], dict)


def test_invitation_lifecycle(writer: Client) -> None:
    email = f"sdk-python-{uuid.uuid4().hex[:12]}@example.test"
    invitation = writer.invitations.create(email=email, arb_role="viewer")
    revoked = False
    try:
        assert (invitation["email"], invitation["arbRole"], invitation["status"]) == (email, "viewer", "PENDING")
        assert Invitation.__required_keys__ <= set(invitation)

        with pytest.raises(ConflictError) as duplicate:
            writer.invitations.create(email=email, arb_role="viewer")
        assert duplicate.value.error_code == "ALREADY_INVITED" and duplicate.value.status == 409

        assert invitation["id"] in [item["id"] for item in writer.invitations.list().auto_paging_iter()]

        writer.invitations.revoke(invitation["id"])
        revoked = True
        with pytest.raises(ConflictError) as again:
            writer.invitations.revoke(invitation["id"])
        assert again.value.error_code == "INVITATION_NOT_PENDING"
        statuses = {item["id"]: item["status"] for item in writer.invitations.list()}
        assert statuses[invitation["id"]] == "REVOKED"
    finally:
        if not revoked:
            writer.invitations.revoke(invitation["id"])


def test_members(writer: Client) -> None:
    members = writer.invitations.members()
    assert members and all(Member.__required_keys__ <= set(member) for member in members)
    assert "tenant-admin" in {member["arbRole"] for member in members}


def test_remove_member(writer: Client) -> None:
    user_sub = os.environ.get("PORTFOLIO_OTHER_SUB", "")
    if not user_sub:
        pytest.skip("PORTFOLIO_OTHER_SUB is empty: no member to remove")
    assert user_sub in [member["userSub"] for member in writer.invitations.members()]
    writer.invitations.remove_member(user_sub)
    assert user_sub not in [member["userSub"] for member in writer.invitations.members()]


def test_unknown_application_is_not_found(reader: Client) -> None:
    with pytest.raises(NotFoundError) as raised:
        reader.applications.get(f"NO-SUCH-APP-{uuid.uuid4().hex[:8]}")
    assert raised.value.error_code == "NOT_FOUND" and raised.value.status == 404
    assert raised.value.request_id and raised.value.rate_limit is not None


def test_bad_token_is_unauthenticated() -> None:
    with Client("ap_pat_" + "0" * 36, base_url=BASE_URL, max_retries=0) as client:
        with pytest.raises(AuthenticationError) as raised:
            client.functions.stats()
    assert raised.value.error_code == "UNAUTHENTICATED" and raised.value.status == 401


def test_read_token_cannot_invite(reader: Client) -> None:
    with pytest.raises(PermissionDeniedError) as raised:
        reader.invitations.create(email=f"sdk-python-{uuid.uuid4().hex[:12]}@example.test", arb_role="viewer")
    assert raised.value.error_code == "INSUFFICIENT_SCOPE" and raised.value.status == 403


def test_spent_token_is_rate_limited() -> None:
    with Client(env("PORTFOLIO_SPENT_TOKEN"), base_url=BASE_URL, max_retries=0) as client:
        with pytest.raises(RateLimitError) as raised:
            client.functions.stats()
    error = raised.value
    assert error.error_code == "RATE_LIMITED" and error.status == 429
    assert error.retry_after is not None and 1 <= error.retry_after <= 60
    assert error.rate_limit is not None and error.rate_limit.remaining == 0


def test_results_carry_rate_limit_and_request_id(reader: Client) -> None:
    response = reader.with_response.functions.stats()
    assert response.status == 200 and response.request_id
    assert response.rate_limit is not None and 0 <= response.rate_limit.remaining < response.rate_limit.limit


def test_the_context_manager_closes_the_connections() -> None:
    transport = httpx.HTTPTransport()
    pool = transport._pool  # httpx keeps its httpcore pool private; this test wants to see it emptied
    with Client(env("PORTFOLIO_READ_TOKEN"), base_url=BASE_URL, transport=transport) as client:
        client.functions.stats()
        opened = list(pool.connections)
    assert client.is_closed and pool.connections == []
    assert all(connection.is_closed() for connection in opened)
    with pytest.raises(RuntimeError):
        client.functions.stats()


def page_size(whole: Sequence[object]) -> int:
    # Pages of 2 on a test tenant's short lists; on a large tenant, about ten pages, so that the
    # test stays within the token's 180 requests a minute.
    return 2 if len(whole) <= 20 else len(whole) // 10 + 1


def test_auto_pagination_gives_the_whole_list(reader: Client, writer: Client) -> None:
    applications = reader.applications.list()
    paged = reader.applications.list(limit=page_size(applications))
    assert len(paged) == min(page_size(applications), len(applications))
    assert paged.has_next_page() == (len(applications) > len(paged))
    assert list(paged.auto_paging_iter()) == list(applications)
    functions = reader.functions.flat()
    assert list(reader.functions.flat(limit=page_size(functions)).auto_paging_iter()) == list(functions)
    members = writer.invitations.members()
    assert list(writer.invitations.members(limit=page_size(members)).auto_paging_iter()) == list(members)
