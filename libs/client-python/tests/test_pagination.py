"""Pages, the Link header and auto-pagination."""

from __future__ import annotations

from typing import Dict, List

import httpx
import pytest

from architecture_portfolio import ArchitecturePortfolioError, Page, RateLimitError
from architecture_portfolio._pagination import next_link
from samples import FUNCTION
from support import Server, ok, path, problem, query

REQUEST_URL = httpx.URL("https://api.example.test/api/v1/referentiel/applications?status=ACTIVE&limit=2")


def app(code: str) -> Dict[str, str]:
    return {"code": code}


def test_auto_paging_iter_follows_the_link_header_to_the_last_page() -> None:
    server = Server(
        ok([app("A"), app("B")], headers={"link": '<applications?status=ACTIVE&limit=2&cursor=c1>; rel="next"'}),
        ok([app("C"), app("D")], headers={"link": '<applications?status=ACTIVE&limit=2&cursor=c2>; rel="next"'}),
        ok([app("E")]),
    )
    with server.client() as client:
        first = client.applications.list(limit=2)
        assert first == [app("A"), app("B")] and first.next_cursor == "c1"
        assert len(server.requests) == 1, "a page is fetched when the iteration reaches it, not before"
        codes = [item["code"] for item in first.auto_paging_iter()]
    assert codes == ["A", "B", "C", "D", "E"]
    assert [path(r) for r in server.requests] == ["/referentiel/applications"] * 3
    assert [query(r) for r in server.requests] == [
        {"status": "ACTIVE", "limit": "2"},
        {"status": "ACTIVE", "limit": "2", "cursor": "c1"},
        {"status": "ACTIVE", "limit": "2", "cursor": "c2"},
    ]
    assert all(r.headers["authorization"] == "Bearer ap_pat_test" for r in server.requests)


def test_a_query_only_reference_keeps_the_path() -> None:
    server = Server(ok([FUNCTION], headers={"link": '<?q=sales&limit=1&cursor=n1>; rel="next"'}), ok([]))
    with server.client() as client:
        items = list(client.functions.search("sales", limit=1).auto_paging_iter())
    assert items == [FUNCTION]
    assert str(server.requests[1].url) == "https://api.example.test/api/v1/referentiel/functions/search?q=sales&limit=1&cursor=n1"


def test_iter_pages_and_next_page() -> None:
    server = Server(
        ok([1], headers={"link": '<changes?limit=1&cursor=x>; rel="next"'}),
        ok([2]),
        ok([2]),
    )
    with server.client() as client:
        first = client.applications.changes("CRM-01", limit=1)
        assert first.has_next_page()
        assert [list(page) for page in first.iter_pages()] == [[1], [2]]
        second = first.next_page()
    assert not second.has_next_page() and second.next_cursor is None
    with pytest.raises(LookupError):
        second.next_page()
    assert [path(r) for r in server.requests] == ["/referentiel/applications/CRM-01/changes"] * 3


def test_without_limit_the_whole_list_is_one_last_page() -> None:
    server = Server(ok([app("A"), app("B"), app("C")]))
    with server.client() as client:
        page = client.applications.list()
        assert list(page.auto_paging_iter()) == [app("A"), app("B"), app("C")]
    assert not page.has_next_page() and len(server.requests) == 1


def test_an_error_on_a_later_page_surfaces_from_the_iteration() -> None:
    server = Server(
        ok([1], headers={"link": '<members?limit=1&cursor=x>; rel="next"'}),
        problem(429, "RATE_LIMITED", headers={"retry-after": "120"}),
    )
    seen: List[int] = []
    with server.client() as client, pytest.raises(RateLimitError):
        for item in client.invitations.members(limit=1).auto_paging_iter():
            seen.append(item)
    assert seen == [1]


def test_every_paginated_list_gives_pages() -> None:
    link = {"link": '<x?cursor=n>; rel="next"'}
    server = Server(*[ok([], headers=link) for _ in range(7)])
    with server.client() as client:
        pages = [
            client.applications.list(limit=1),
            client.applications.changes("A", limit=1),
            client.functions.flat(limit=1),
            client.functions.search("a", limit=1),
            client.functions.by_application("A", limit=1),
            client.invitations.list(limit=1),
            client.invitations.members(limit=1),
        ]
    assert all(isinstance(page, Page) and page.next_cursor == "n" for page in pages)


def never_fetched(url: str) -> Page[int]:
    raise AssertionError(f"fetched {url}")


def test_a_page_is_a_list() -> None:
    page = Page([1, 2], None, never_fetched)
    assert isinstance(page, list) and page == [1, 2] and len(page) == 2
    assert repr(page) == "Page([1, 2], next_cursor=None)"


@pytest.mark.parametrize(
    "header, expected",
    [
        (None, None),
        ("", None),
        ('<applications?cursor=a>; rel="next"', "https://api.example.test/api/v1/referentiel/applications?cursor=a"),
        ("<applications?cursor=a>; rel=next", "https://api.example.test/api/v1/referentiel/applications?cursor=a"),
        ('<applications?cursor=a>;rel="prev next"', "https://api.example.test/api/v1/referentiel/applications?cursor=a"),
        ('<applications?cursor=a>; REL="NEXT"', "https://api.example.test/api/v1/referentiel/applications?cursor=a"),
        ('<first?cursor=0>; rel="first", <applications?cursor=b>; rel="next"', "https://api.example.test/api/v1/referentiel/applications?cursor=b"),
        ('<applications?cursor=p>; rel="prev"', None),
        ('<applications?cursor=a>; title="a, b; c"; rel="next"', "https://api.example.test/api/v1/referentiel/applications?cursor=a"),
        ('<https://other.example.test/v1/x?cursor=a>; rel="next"', "https://other.example.test/v1/x?cursor=a"),
        ('</api/v1/referentiel/applications?cursor=a>; rel="next"', "https://api.example.test/api/v1/referentiel/applications?cursor=a"),
        ('<./a:b?cursor=a>; rel="next"', "https://api.example.test/api/v1/referentiel/a:b?cursor=a"),
    ],
)
def test_next_link_is_resolved_against_the_request_url(header: str, expected: str) -> None:
    assert next_link(header, REQUEST_URL) == expected


def test_next_cursor_is_decoded() -> None:
    page = Page([], "https://api.example.test/api/v1/x?limit=2&cursor=a%2Bb%3D", never_fetched)
    assert page.next_cursor == "a+b="


def test_a_next_link_outside_the_base_url_is_not_followed_and_gets_no_token() -> None:
    for reference in [
        "https://elsewhere.example/api/v1/referentiel/functions/flat?cursor=2",
        "//elsewhere.example/api/v1/referentiel/functions/flat?cursor=2",
        "/other/referentiel/functions/flat?cursor=2",
        "../../../admin?cursor=2",
        "http://api.example.test/api/v1/referentiel/functions/flat?cursor=2",
    ]:
        server = Server(ok([1], headers={"link": f'<{reference}>; rel="next"'}), ok([2]))
        with server.client() as client:
            page = client.functions.flat(limit=1)
            with pytest.raises(ArchitecturePortfolioError, match="outside https://api.example.test/api/v1"):
                list(page.auto_paging_iter())
        assert len(server.requests) == 1, reference


def test_links_are_followed_under_a_base_url_written_with_capitals_or_its_default_port() -> None:
    for base_url in ["https://API.Example.TEST/api/v1", "https://api.example.test:443/api/v1/"]:
        server = Server(ok([1], headers={"link": '<?limit=1&cursor=2>; rel="next"'}), ok([2]))
        with server.client(base_url=base_url) as client:
            assert list(client.functions.flat(limit=1).auto_paging_iter()) == [1, 2]
        assert str(server.requests[1].url) == "https://api.example.test/api/v1/referentiel/functions/flat?limit=1&cursor=2"


@pytest.mark.parametrize(
    "links",
    [
        ["?limit=1"],
        ["?limit=1&cursor=2", "?limit=1&cursor=2"],
        ["?limit=1&cursor=2", "?limit=1&cursor=3", "?limit=1&cursor=2"],
    ],
)
def test_a_next_link_back_to_a_page_already_read_stops_the_iteration_instead_of_looping(links: List[str]) -> None:
    server = Server(*[ok([index], headers={"link": f'<{reference}>; rel="next"'}) for index, reference in enumerate(links)], ok(["never"]))
    seen: List[int] = []
    with server.client() as client, pytest.raises(ArchitecturePortfolioError, match="leads back to a page already read"):
        for item in client.functions.flat(limit=1).auto_paging_iter():
            seen.append(item)
    assert seen == list(range(len(links)))
    assert len(server.requests) == len(links)


def test_parameters_are_read_whole_as_in_typescript() -> None:
    header = '<?cursor=p>; title="back; rel=next"; rel=prev, <?cursor=n>; rel="next"'
    assert next_link(header, REQUEST_URL) == "https://api.example.test/api/v1/referentiel/applications?cursor=n"
    assert next_link('<?cursor=p>; title="a, <?cursor=q>; rel=next"; rel=prev', REQUEST_URL) is None
