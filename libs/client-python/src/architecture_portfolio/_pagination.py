from __future__ import annotations

import re
from typing import Callable, Iterable, Iterator, List, Optional, TypeVar

import httpx

from ._errors import ArchitecturePortfolioError

T = TypeVar("T")

# One link-value of RFC 8288: `<target>` then `; name=value` parameters, the value quoted or not.
_LINK = re.compile(r'<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"[^"]*"|[^;,]*))?)*)')
_PARAMETER = re.compile(r';\s*([^;,=\s]+)\s*(?:=\s*(?:"([^"]*)"|([^;,]*)))?')


class Page(List[T]):
    """One answer of a list endpoint: a `list` of its items, plus the way to the next page.

    Without `limit` or `cursor` the API answers the whole list, and the page is the last one.
    `auto_paging_iter()` yields every item of this page and of the pages after it, fetching
    them as the iteration reaches them.
    """

    next_url: Optional[str]
    """The absolute URL of the next page (from the `Link: <...>; rel="next"` header), or None."""
    url: Optional[str]
    """The URL this page was read from, when known."""

    def __init__(
        self,
        items: Iterable[T],
        next_url: Optional[str],
        fetch: Callable[[str], Page[T]],
        *,
        url: Optional[str] = None,
    ) -> None:
        super().__init__(items)
        self.next_url = next_url
        self.url = url
        self._fetch = fetch

    @property
    def next_cursor(self) -> Optional[str]:
        """The `cursor` to pass to the same list call for the next page, or None on the last page."""
        if self.next_url is None:
            return None
        cursor: Optional[str] = httpx.URL(self.next_url).params.get("cursor")
        return cursor

    def has_next_page(self) -> bool:
        return self.next_url is not None

    def next_page(self) -> Page[T]:
        """Fetches the page after this one; raises LookupError on the last page."""
        if self.next_url is None:
            raise LookupError("this is the last page")
        return self._fetch(self.next_url)

    def iter_pages(self) -> Iterator[Page[T]]:
        """This page, then each following page, fetched one at a time.

        Raises ArchitecturePortfolioError when a next link leads back to a page already read,
        which would otherwise loop for ever, sending requests all along.
        """
        page: Page[T] = self
        read = {page.url} if page.url is not None else set()
        yield page
        while page.next_url is not None:
            if page.next_url in read:
                raise ArchitecturePortfolioError(
                    f"The next-page link of {page.url} leads back to a page already read: {page.next_url}"
                )
            read.add(page.next_url)
            page = page.next_page()
            yield page

    def auto_paging_iter(self) -> Iterator[T]:
        """Every item from this page to the end of the list."""
        for page in self.iter_pages():
            yield from page

    def __repr__(self) -> str:
        return f"Page({list.__repr__(self)}, next_cursor={self.next_cursor!r})"


def next_link(link_header: Optional[str], request_url: httpx.URL) -> Optional[str]:
    """The target of the `rel="next"` link, resolved against the URL of the request it answers."""
    if not link_header:
        return None
    for match in _LINK.finditer(link_header):
        for parameter in _PARAMETER.finditer(match.group(2)):
            name, quoted, bare = parameter.groups()
            relations = (quoted if quoted is not None else bare or "").lower().split()
            if name.lower() == "rel" and "next" in relations:
                return str(request_url.join(match.group(1).strip()))
    return None
