from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from types import TracebackType
from typing import Any, Dict, List, Mapping, Optional, Type, Union

import httpx

from . import _retry
from ._errors import (
    ApiError,
    ArchitecturePortfolioError,
    NetworkError,
    NetworkTimeoutError,
    UnexpectedResponseError,
    api_error,
)
from ._pagination import Page, next_link
from ._resources import (
    Applications,
    ApplicationsWithResponse,
    Functions,
    FunctionsWithResponse,
    Invitations,
    InvitationsWithResponse,
)
from ._response import ApiResponse, RateLimit
from ._version import __version__

DEFAULT_BASE_URL = "http://localhost:8080/api/v1"
USER_AGENT = f"architecture-portfolio-python/{__version__}"

QueryValue = Union[str, int, None]

# What a personal access token may hold: visible ASCII, no space.
_TOKEN = re.compile(r"[\x21-\x7e]+")
# RFC 9110's token, the syntax of a header name.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class Client:
    """A client of the architecture-portfolio API.

    One client holds a pool of connections: create it once, use it from any thread, and close
    it (or use it as a context manager) when done.

        with Client("ap_pat_...") as client:
            for application in client.applications.list(criticality="MISSION_CRITICAL"):
                print(application["code"])
    """

    applications: Applications
    functions: Functions
    invitations: Invitations
    with_response: ClientWithResponse
    """The same resources, returning an `ApiResponse` (data, status, headers, rate limit, request id)."""

    def __init__(
        self,
        token: str,
        base_url: Optional[str] = None,
        timeout: Optional[float] = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        max_retries: int = 2,
        transport: Optional[httpx.BaseTransport] = None,
    ) -> None:
        """
        token: a personal access token (`ap_pat_...`), sent as `Authorization: Bearer <token>`.
        base_url: the API's base URL, `/api/v1` included; default `http://localhost:8080/api/v1`.
        timeout: seconds an attempt may last (None: no limit); each retry gets its own.
        headers: sent with every request, after (so over) the client's own.
        max_retries: extra attempts after a 429, a 503 or, for idempotent methods, a connection error.
        transport: the httpx transport to send through (tests pass an `httpx.MockTransport`).
        """
        if not isinstance(token, str) or not token.strip():
            raise ValueError("token must be a personal access token such as ap_pat_...")
        # Stripped as fetch strips it in the TypeScript client (a token read from a file ends with a
        # newline). Checked here because the HTTP layer's own error would quote the whole token.
        token = token.strip()
        if not _TOKEN.fullmatch(token):
            raise ValueError(
                "token holds a space, a control or a non-ASCII character;"
                " a personal access token is ap_pat_ then letters and digits"
            )
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError("max_retries must be an integer, 0 or more")
        if timeout is not None and not timeout > 0:
            raise ValueError("timeout must be a number of seconds above 0, or None")
        self.base_url = _check_base_url(base_url if base_url is not None else DEFAULT_BASE_URL)
        self.timeout = timeout
        self.max_retries = max_retries
        default_headers = httpx.Headers(
            {"Authorization": f"Bearer {token}", "User-Agent": USER_AGENT, "Accept": "application/json"}
        )
        # Headers.update replaces a header whatever the case of its name, where a dict would keep
        # both "User-Agent" and "user-agent" and send the two.
        default_headers.update(_check_headers(headers or {}))
        self._http = httpx.Client(headers=default_headers, timeout=httpx.Timeout(timeout), transport=transport)
        self.with_response = ClientWithResponse(self)
        self.applications = Applications(self.with_response.applications)
        self.functions = Functions(self.with_response.functions)
        self.invitations = Invitations(self.with_response.invitations)

    def close(self) -> None:
        """Closes the connections; the client cannot send requests afterwards."""
        self._http.close()

    @property
    def is_closed(self) -> bool:
        return self._http.is_closed

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(base_url={self.base_url!r})"

    def _request(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, QueryValue]] = None,
        body: Any = None,
    ) -> ApiResponse[Any]:
        return self._send(method, self._url(path, query), body)

    def _request_page(self, path: str, query: Mapping[str, QueryValue]) -> ApiResponse[Page[Any]]:
        return self._page(self._url(path, query))

    def _url(self, path: str, query: Optional[Mapping[str, QueryValue]]) -> httpx.URL:
        # Appended, not joined: joining "/referentiel/..." would drop the base URL's /api/v1.
        params = {name: str(value) for name, value in (query or {}).items() if value is not None}
        return httpx.URL(self.base_url + path, params=params)

    def _page(self, url: httpx.URL) -> ApiResponse[Page[Any]]:
        response = self._send("GET", url, None)
        if not isinstance(response.data, list):
            raise UnexpectedResponseError(
                f"GET {url} answered {type(response.data).__name__} where a list was expected",
                status=response.status,
                headers=response.headers,
                body=json.dumps(response.data),
            )
        page = Page(response.data, next_link(response.headers.get("link"), url), self._next_page, url=str(url))
        return replace(response, data=page)

    def _next_page(self, url: str) -> Page[Any]:
        # The token goes only to the API: a next link elsewhere is a misconfigured or hostile answer.
        if not url.startswith(self.base_url + "/"):
            raise ArchitecturePortfolioError(f"Refusing to follow a next-page link outside {self.base_url}: {url}")
        return self._page(httpx.URL(url)).data

    def _send(self, method: str, url: httpx.URL, body: Any) -> ApiResponse[Any]:
        retry = 0
        while True:
            try:
                return self._attempt(method, url, body)
            except ApiError as error:
                wait = self._wait_after_error_status(error, retry)
                if wait is None:
                    raise
            except NetworkError as error:
                if not self._may_retry_connection(error, method, retry):
                    raise
                wait = _retry.backoff(retry)
            _retry.sleep(wait)
            retry += 1

    def _wait_after_error_status(self, error: ApiError, retry: int) -> Optional[float]:
        """Seconds to wait before retrying after `error`, or None when it must surface."""
        if error.status not in _retry.RETRIED_STATUSES or retry >= self.max_retries:
            return None
        seconds = _retry.retry_after(error.headers)
        if seconds is None:
            return _retry.backoff(retry)
        return float(seconds) if seconds <= _retry.RETRY_AFTER_MAX else None

    def _may_retry_connection(self, error: NetworkError, method: str, retry: int) -> bool:
        # A POST that failed on the wire may have reached the server: sending it again could
        # create a second invitation. Only broken connections qualify: a timeout (httpx's or the
        # attempt's own) means a slow server, which more requests would not help.
        return (
            retry < self.max_retries
            and method in _retry.IDEMPOTENT_METHODS
            and isinstance(error.__cause__, (httpx.NetworkError, httpx.RemoteProtocolError))
        )

    def _attempt(self, method: str, url: httpx.URL, body: Any) -> ApiResponse[Any]:
        request = self._http.build_request(method, url, json=body)
        started = time.monotonic()
        try:
            response = self._http.send(request, stream=True)
            try:
                content = self._read(response, started)
            finally:
                response.close()
        except httpx.TimeoutException as error:
            raise NetworkTimeoutError(f"{method} {url} took more than {self.timeout} s") from error
        except httpx.RequestError as error:
            raise NetworkError(f"{method} {url} failed: {error!r}") from error
        if not 200 <= response.status_code < 300:
            raise api_error(response.status_code, response.headers, content, response.reason_phrase)
        return ApiResponse(
            data=self._decode(method, url, response, content),
            status=response.status_code,
            headers=response.headers,
            rate_limit=RateLimit.from_headers(response.headers),
            request_id=response.headers.get("x-request-id"),
        )

    def _read(self, response: httpx.Response, started: float) -> bytes:
        # httpx bounds each wait for data by the timeout; this bounds the whole attempt, so a
        # server trickling its answer byte by byte cannot hold the caller indefinitely.
        chunks: List[bytes] = []
        for chunk in response.iter_bytes():
            if self.timeout is not None and time.monotonic() - started > self.timeout:
                raise NetworkTimeoutError(f"{response.request.method} {response.request.url} took more than {self.timeout} s")
            chunks.append(chunk)
        return b"".join(chunks)

    @staticmethod
    def _decode(method: str, url: httpx.URL, response: httpx.Response, content: bytes) -> Any:
        if response.status_code == 204 or not content:
            return None
        try:
            return json.loads(content)
        except ValueError:
            raise UnexpectedResponseError(
                f"{method} {url} answered {response.status_code} with a body that is not JSON"
                f" ({response.headers.get('content-type', 'no content-type')}); does the base URL end with /api/v1?",
                status=response.status_code,
                headers=response.headers,
                body=content.decode("utf-8", errors="replace"),
            ) from None


def _check_base_url(base_url: str) -> str:
    """The base URL as httpx writes it (lower-case host, no default port), without trailing slashes."""
    try:
        url = httpx.URL(base_url)
    except (httpx.InvalidURL, TypeError) as error:
        raise ValueError(f"base_url is not an absolute http(s) URL: {base_url}") from error
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"base_url is not an absolute http(s) URL: {base_url}")
    if url.userinfo:
        # Error messages quote the URL.
        raise ValueError("base_url must not hold a user name or password")
    if url.query or url.fragment:
        raise ValueError("base_url must not have a query or a fragment, the paths are appended to it")
    return str(url.copy_with(query=None, fragment=None)).rstrip("/")


def _check_headers(headers: Mapping[str, str]) -> Dict[str, str]:
    """The caller's headers, refused up front when the HTTP layer would refuse them: its error
    quotes the value, which may be a secret."""
    checked: Dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise ValueError(f"headers: {name!r} is not a header name")
        stripped = value.strip(" \t\r\n") if isinstance(value, str) else None
        if stripped is None or not stripped.isascii() or any(c in stripped for c in "\r\n\0"):
            raise ValueError(f"headers: the value of {name} is not a string of ASCII characters without line breaks")
        checked[name] = stripped
    return checked


class ClientWithResponse:
    """`client.with_response`: each method answers an `ApiResponse` whose `data` is the usual result."""

    def __init__(self, client: Client) -> None:
        self.applications = ApplicationsWithResponse(client)
        self.functions = FunctionsWithResponse(client)
        self.invitations = InvitationsWithResponse(client)
