"""What each method sends and what it gives back."""

from __future__ import annotations

import gzip
from typing import Any, Callable, Dict, List, Tuple

import httpx
import pytest

from architecture_portfolio import DEFAULT_BASE_URL, ApiResponse, Client, Page, RateLimit, __version__
from samples import APPLICATION, CHANGE, FUNCTION, INVITATION, MEMBER, POSI, STATS, TREE
from support import TOKEN, Server, body, ok, path, query

FUNCTION_ID = FUNCTION["id"]
INVITATION_ID = INVITATION["id"]

# (label, call, method, path, query, JSON body sent, status and body answered, expected result)
Case = Tuple[str, Callable[[Client], Any], str, str, Dict[str, str], Any, int, Any, Any]
CASES: List[Case] = [
    ("applications.list", lambda c: c.applications.list(),
     "GET", "/referentiel/applications", {"status": "ACTIVE"}, None, 200, [APPLICATION], [APPLICATION]),
    ("applications.list filters", lambda c: c.applications.list(
        data_class="RESTRICTED", criticality="MISSION_CRITICAL", regulation="DORA", status="RETIRED", limit=10, cursor="c2"),
     "GET", "/referentiel/applications",
     {"data_class": "RESTRICTED", "criticality": "MISSION_CRITICAL", "regulation": "DORA", "status": "RETIRED",
      "limit": "10", "cursor": "c2"}, None, 200, [], []),
    ("applications.get", lambda c: c.applications.get("CRM-01"),
     "GET", "/referentiel/applications/CRM-01", {}, None, 200, APPLICATION, APPLICATION),
    ("applications.changes", lambda c: c.applications.changes("CRM-01"),
     "GET", "/referentiel/applications/CRM-01/changes", {}, None, 200, [CHANGE], [CHANGE]),
    ("applications.changes paged", lambda c: c.applications.changes("CRM-01", limit=5, cursor="x"),
     "GET", "/referentiel/applications/CRM-01/changes", {"limit": "5", "cursor": "x"}, None, 200, [CHANGE], [CHANGE]),
    ("functions.tree", lambda c: c.functions.tree(),
     "GET", "/referentiel/functions", {}, None, 200, [TREE], [TREE]),
    ("functions.flat", lambda c: c.functions.flat(limit=2),
     "GET", "/referentiel/functions/flat", {"limit": "2"}, None, 200, [FUNCTION], [FUNCTION]),
    ("functions.posi", lambda c: c.functions.posi(),
     "GET", "/referentiel/functions/posi", {}, None, 200, [POSI], [POSI]),
    ("functions.search", lambda c: c.functions.search("quotes & sales"),
     "GET", "/referentiel/functions/search", {"q": "quotes & sales"}, None, 200, [FUNCTION], [FUNCTION]),
    ("functions.search paged", lambda c: c.functions.search("sales", limit=1, cursor="n"),
     "GET", "/referentiel/functions/search", {"q": "sales", "limit": "1", "cursor": "n"}, None, 200, [], []),
    ("functions.stats", lambda c: c.functions.stats(),
     "GET", "/referentiel/functions/stats", {}, None, 200, STATS, STATS),
    ("functions.by_application", lambda c: c.functions.by_application("CRM-01", limit=3),
     "GET", "/referentiel/functions/by-application/CRM-01", {"limit": "3"}, None, 200, [FUNCTION], [FUNCTION]),
    ("functions.get", lambda c: c.functions.get(FUNCTION_ID),
     "GET", f"/referentiel/functions/{FUNCTION_ID}", {}, None, 200, FUNCTION, FUNCTION),
    ("invitations.create", lambda c: c.invitations.create(email="new.architect@corp.example", arb_role="architect"),
     "POST", "/tenant/invitations", {}, {"email": "new.architect@corp.example", "arbRole": "architect"}, 201,
     INVITATION, INVITATION),
    ("invitations.list", lambda c: c.invitations.list(),
     "GET", "/tenant/invitations", {}, None, 200, [INVITATION], [INVITATION]),
    ("invitations.list paged", lambda c: c.invitations.list(limit=20, cursor="p"),
     "GET", "/tenant/invitations", {"limit": "20", "cursor": "p"}, None, 200, [INVITATION], [INVITATION]),
    ("invitations.members", lambda c: c.invitations.members(limit=1),
     "GET", "/tenant/invitations/members", {"limit": "1"}, None, 200, [MEMBER], [MEMBER]),
    ("invitations.revoke", lambda c: c.invitations.revoke(INVITATION_ID),
     "DELETE", f"/tenant/invitations/{INVITATION_ID}", {}, None, 204, None, None),
    ("invitations.remove_member", lambda c: c.invitations.remove_member("auth0|5f1e"),
     "DELETE", "/tenant/invitations/members/auth0%7C5f1e", {}, None, 204, None, None),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_each_method_sends_its_request_and_returns_the_answer(case: Case) -> None:
    _label, call, method, expected_path, expected_query, sent_body, status, answered, expected = case
    server = Server(ok(answered, status=status))
    with server.client() as client:
        result = call(client)
    (request,) = server.requests
    assert (request.method, path(request), query(request), body(request)) == (method, expected_path, expected_query, sent_body)
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["accept"] == "application/json"
    if sent_body is not None:
        assert request.headers["content-type"] == "application/json"
    assert result == expected


def test_list_methods_answer_pages_and_trees_answer_plain_lists() -> None:
    server = Server(ok([APPLICATION]), ok([TREE]))
    with server.client() as client:
        applications = client.applications.list()
        tree = client.functions.tree()
    assert isinstance(applications, Page) and applications.next_cursor is None
    assert type(tree) is list


def test_path_parameters_are_percent_encoded_whole() -> None:
    server = Server(ok(APPLICATION), ok([]), ok(None, status=204))
    with server.client() as client:
        client.applications.get("a b/../x?y#z")
        client.functions.by_application("é%2F")
        client.invitations.revoke("../members/x")
    assert [path(r) for r in server.requests] == [
        "/referentiel/applications/a%20b%2F..%2Fx%3Fy%23z",
        "/referentiel/functions/by-application/%C3%A9%252F",
        "/tenant/invitations/..%2Fmembers%2Fx",
    ]


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.applications.get(""),
        lambda c: c.applications.changes(""),
        lambda c: c.functions.get(""),
        lambda c: c.functions.by_application(""),
        lambda c: c.invitations.revoke(""),
        lambda c: c.invitations.remove_member(""),
    ],
)
def test_an_empty_path_parameter_is_refused_before_sending(call: Callable[[Client], Any]) -> None:
    # "/tenant/invitations/" + "" would otherwise revoke nothing but list invitations, and so on.
    server = Server()
    with server.client() as client, pytest.raises(ValueError, match="must not be empty"):
        call(client)
    assert server.requests == []


def test_a_non_string_path_parameter_is_refused() -> None:
    server = Server()
    with server.client() as client, pytest.raises(TypeError, match="code must be a string"):
        client.applications.get(42)  # type: ignore[arg-type]


def test_every_request_carries_the_default_headers_and_the_callers() -> None:
    server = Server(ok([]), ok(INVITATION, status=201))
    with server.client(headers={"X-Team": "billing", "Accept-Language": "fr"}) as client:
        client.functions.tree()
        client.invitations.create(email="a@corp.example", arb_role="viewer")
    for request in server.requests:
        assert request.headers["authorization"] == "Bearer ap_pat_test"
        assert request.headers["user-agent"] == f"architecture-portfolio-python/{__version__}"
        assert request.headers["accept"] == "application/json"
        assert request.headers["x-team"] == "billing"
        assert request.headers["accept-language"] == "fr"


def test_callers_headers_win_over_the_clients_own() -> None:
    server = Server(ok([]))
    with server.client(headers={"User-Agent": "billing-sync/2"}) as client:
        client.functions.tree()
    assert server.requests[0].headers.get_list("user-agent") == ["billing-sync/2"]


@pytest.mark.parametrize("base_url", ["https://gw.example.test/api/v1", "https://gw.example.test/api/v1/"])
def test_paths_are_appended_to_the_base_url_with_or_without_its_trailing_slash(base_url: str) -> None:
    server = Server(ok([]))
    with Client(TOKEN, base_url=base_url, transport=httpx.MockTransport(server)) as client:
        client.functions.tree()
    assert str(server.requests[0].url) == "https://gw.example.test/api/v1/referentiel/functions"


def test_the_base_url_defaults_to_the_local_gateway() -> None:
    server = Server(ok(STATS))
    with Client(TOKEN, transport=httpx.MockTransport(server)) as client:
        client.functions.stats()
    assert DEFAULT_BASE_URL == "http://localhost:8080/api/v1"
    assert str(server.requests[0].url) == "http://localhost:8080/api/v1/referentiel/functions/stats"


def test_with_response_gives_data_status_headers_rate_limit_and_request_id() -> None:
    server = Server(ok(APPLICATION, headers={"x-request-id": "req_42", "x-ratelimit-remaining": "17"}))
    with server.client() as client:
        response = client.with_response.applications.get("CRM-01")
    assert isinstance(response, ApiResponse)
    assert response.data == APPLICATION
    assert response.status == 200
    assert response.request_id == "req_42"
    assert response.rate_limit == RateLimit(limit=180, remaining=17, reset=1795340460)
    assert response.headers["content-type"] == "application/json"


def test_with_response_of_a_204_has_no_data_but_its_headers() -> None:
    server = Server(ok(None, status=204))
    with server.client() as client:
        response = client.with_response.invitations.revoke(INVITATION_ID)
    assert (response.data, response.status, response.request_id) == (None, 204, "req_1")
    assert response.rate_limit is not None and response.rate_limit.remaining == 179


def test_with_response_of_a_list_holds_the_page() -> None:
    link = '<members?limit=1&cursor=n2>; rel="next"'
    server = Server(ok([MEMBER], headers={"link": link}))
    with server.client() as client:
        response = client.with_response.invitations.members(limit=1)
    assert isinstance(response.data, Page)
    assert response.data == [MEMBER] and response.data.next_cursor == "n2"


@pytest.mark.parametrize(
    "headers",
    [
        {"x-ratelimit-limit": "180", "x-ratelimit-remaining": "oops", "x-ratelimit-reset": "1"},
        {"x-ratelimit-limit": "180", "x-ratelimit-reset": "1"},
    ],
)
def test_rate_limit_is_none_when_the_headers_are_missing_or_unreadable(headers: Dict[str, str]) -> None:
    response = httpx.Response(200, headers={"content-type": "application/json", **headers}, content=b"{}")
    server = Server(response)
    with server.client() as client:
        assert client.with_response.functions.stats().rate_limit is None


def test_the_body_of_a_success_may_be_gzip_encoded() -> None:
    compressed = gzip.compress(b'{"functionCount": 3}')
    server = Server(httpx.Response(200, headers={"content-type": "application/json", "content-encoding": "gzip"}, content=compressed))
    with server.client() as client:
        assert client.functions.stats() == {"functionCount": 3}


@pytest.mark.parametrize("segment", [".", ".."])
@pytest.mark.parametrize(
    "call",
    [
        lambda c, s: c.applications.get(s),
        lambda c, s: c.applications.changes(s),
        lambda c, s: c.functions.get(s),
        lambda c, s: c.functions.by_application(s),
        lambda c, s: c.invitations.revoke(s),
        lambda c, s: c.invitations.remove_member(s),
    ],
)
def test_a_dot_segment_is_refused_before_sending(call: Callable[[Client, str], Any], segment: str) -> None:
    # ".../applications/.." would be resolved into ".../referentiel/", another endpoint.
    server = Server()
    with server.client() as client, pytest.raises(ValueError, match="cannot be"):
        call(client, segment)
    assert server.requests == []


def test_dots_inside_a_segment_are_kept() -> None:
    server = Server(ok(APPLICATION))
    with server.client() as client:
        client.applications.get("...")
    assert path(server.requests[0]) == "/referentiel/applications/..."


@pytest.mark.parametrize("name", ["user-agent", "USER-AGENT", "User-Agent"])
def test_callers_headers_replace_the_clients_own_whatever_their_case(name: str) -> None:
    server = Server(ok([]))
    with server.client(headers={name: "billing-sync/2", "authorization": "Bearer ap_pat_other", "accept": "application/json; charset=utf-8"}) as client:
        client.functions.tree()
    headers = server.requests[0].headers
    assert headers.get_list("user-agent") == ["billing-sync/2"]
    assert headers.get_list("authorization") == ["Bearer ap_pat_other"]
    assert headers.get_list("accept") == ["application/json; charset=utf-8"]


def test_a_header_the_http_layer_would_refuse_is_refused_without_quoting_its_value() -> None:
    for headers in [{"x-api-key": "s3cr3t\r\nX-Injected: 1"}, {"x-api-key": "s3cr3t\u20ac"}, {"bad name": "s3cr3t"}]:
        with pytest.raises(ValueError) as raised:
            Client(TOKEN, headers=headers)
        assert "s3cr3t" not in str(raised.value)
    server = Server(ok([]))
    with server.client(headers={"x-trace": " t1\n"}) as client:
        client.functions.tree()
    assert server.requests[0].headers["x-trace"] == "t1"


def test_the_token_is_stripped_as_fetch_strips_it() -> None:
    server = Server(ok([]))
    with Client(" ap_pat_fromfile\n", base_url="https://api.example.test/api/v1", transport=httpx.MockTransport(server)) as client:
        client.functions.tree()
    assert server.requests[0].headers.get_list("authorization") == ["Bearer ap_pat_fromfile"]


@pytest.mark.parametrize("token", ["ap_pat_SEC\nRET", "ap_pat_SEC RET", "ap_pat_SECRET\u20ac", "ap_pat_SEC\x00RET"])
def test_a_token_the_http_layer_would_refuse_is_refused_without_quoting_it(token: str) -> None:
    # httpx would otherwise raise at the first request, quoting the whole Authorization header.
    with pytest.raises(ValueError) as raised:
        Client(token)
    assert "SEC" not in str(raised.value)


@pytest.mark.parametrize(
    "base_url, message",
    [
        ("localhost:8080/api/v1", "absolute"),
        ("/api/v1", "absolute"),
        ("ftp://gw.example.test/api/v1", "absolute"),
        ("https://gw.example.test/api/v1?tenant=a", "query"),
        ("https://gw.example.test/api/v1#x", "fragment"),
        ("https://me:hunter2@gw.example.test/api/v1", "user name or password"),
    ],
)
def test_a_base_url_the_paths_cannot_be_appended_to_is_refused(base_url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        Client(TOKEN, base_url=base_url)
    assert "hunter2" not in str(raised.value)


def test_the_base_url_is_normalized() -> None:
    assert Client(TOKEN, base_url="HTTPS://API.Example.TEST:443/api/v1/").base_url == "https://api.example.test/api/v1"
