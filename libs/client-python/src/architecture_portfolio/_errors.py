from __future__ import annotations

import json
from typing import Any, Dict, Optional, Tuple, Type

import httpx

from . import _retry
from ._response import RateLimit


class ArchitecturePortfolioError(Exception):
    """Base of every error this library raises."""

    def __reduce__(self) -> Tuple[Any, ...]:
        # Exception pickles as cls(*args), which the keyword-only fields of the subclasses refuse:
        # an error raised in a worker process (multiprocessing, concurrent.futures, Celery) could
        # not reach the parent. Rebuilt from its args and attributes instead.
        return (_rebuild, (type(self), self.args, self.__dict__))


def _rebuild(cls: Type[ArchitecturePortfolioError], args: Tuple[Any, ...], state: Dict[str, Any]) -> ArchitecturePortfolioError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class ApiError(ArchitecturePortfolioError):
    """The API answered with an error status (4xx, 5xx or an unexpected 3xx).

    The fields come from the RFC 9457 problem body when there is one; with a body that is not a
    problem document (a proxy's HTML page, say) `error_code`, `title`, `detail`, `instance` and
    `type` are None and `body` holds the text.
    """

    status: int
    error_code: Optional[str]
    """The stable code to compare, such as "ALREADY_INVITED" (never compare `title`)."""
    title: Optional[str]
    detail: Optional[str]
    instance: Optional[str]
    type: Optional[str]
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
    headers: httpx.Headers
    body: Any
    """The parsed JSON body, else the body's text, else None when the answer had no body."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        error_code: Optional[str] = None,
        title: Optional[str] = None,
        detail: Optional[str] = None,
        instance: Optional[str] = None,
        type: Optional[str] = None,
        request_id: Optional[str] = None,
        rate_limit: Optional[RateLimit] = None,
        headers: Optional[httpx.Headers] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.title = title
        self.detail = detail
        self.instance = instance
        self.type = type
        self.request_id = request_id
        self.rate_limit = rate_limit
        self.headers = headers if headers is not None else httpx.Headers()
        self.body = body


class BadRequestError(ApiError):
    """400: the request does not match the endpoint (`INVALID_REQUEST`) or one of its rules."""


class AuthenticationError(ApiError):
    """401 `UNAUTHENTICATED`: the token is missing, malformed, unknown, revoked or expired."""


class PermissionDeniedError(ApiError):
    """403 `INSUFFICIENT_SCOPE`: the token's scope, or its holder's role, does not allow the request."""


class NotFoundError(ApiError):
    """404 `NOT_FOUND`."""


class ConflictError(ApiError):
    """409: `ALREADY_INVITED`, `INVITATION_NOT_PENDING`, `LAST_TENANT_ADMIN`..."""


class RateLimitError(ApiError):
    """429 `RATE_LIMITED`: the token used its budget of the last 60 seconds."""

    retry_after: Optional[int]
    """Seconds to wait before trying again, from `Retry-After`."""

    def __init__(self, message: str, *, retry_after: Optional[int] = None, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx: a failure on the API's side."""


class ServiceUnavailableError(ServerError):
    """503 `UNAVAILABLE`: a service behind the API is down or slow."""

    retry_after: Optional[int]
    """Seconds to wait before trying again, from `Retry-After`."""

    def __init__(self, message: str, *, retry_after: Optional[int] = None, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.retry_after = retry_after


class NetworkError(ArchitecturePortfolioError):
    """No answer could be read: connection refused or reset, DNS failure, body cut short...

    Not an ApiError: the API may never have seen the request.
    """


class NetworkTimeoutError(NetworkError):
    """An attempt lasted longer than the client's `timeout`."""


class UnexpectedResponseError(ArchitecturePortfolioError):
    """A success status whose body is not the JSON the operation answers.

    Most often a `base_url` that does not point at the API (it must end with `/api/v1`).
    """

    status: int
    headers: httpx.Headers
    body: str

    def __init__(self, message: str, *, status: int, headers: httpx.Headers, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers
        self.body = body


_BY_STATUS: Dict[int, Type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def error_class(status: int) -> Type[ApiError]:
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else ApiError


def api_error(status: int, headers: httpx.Headers, content: bytes, reason: str) -> ApiError:
    """The error for an answer with an error status, whatever its body holds."""
    body = _body(content, headers)
    problem: Dict[str, Any] = body if isinstance(body, dict) else {}
    error_code = _text(problem.get("errorCode"))
    detail = _text(problem.get("detail"))
    request_id = headers.get("x-request-id")
    summary = detail or _text(problem.get("title")) or (body[:200] if isinstance(body, str) and body else reason)
    message = f"{status} {error_code or reason}: {summary}" + (f" (request id {request_id})" if request_id else "")
    fields: Dict[str, Any] = dict(
        status=status,
        error_code=error_code,
        title=_text(problem.get("title")),
        detail=detail,
        instance=_text(problem.get("instance")),
        type=_text(problem.get("type")),
        request_id=request_id,
        rate_limit=RateLimit.from_headers(headers),
        headers=headers,
        body=body,
    )
    cls = error_class(status)
    if cls is RateLimitError or cls is ServiceUnavailableError:
        fields["retry_after"] = _retry.retry_after(headers)
    return cls(message, **fields)


def _body(content: bytes, headers: httpx.Headers) -> Any:
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        try:
            return content.decode(_charset(headers), errors="replace")
        except LookupError:
            return content.decode("utf-8", errors="replace")


def _charset(headers: httpx.Headers) -> str:
    content_type: str = headers.get("content-type", "")
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return "utf-8"


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None
