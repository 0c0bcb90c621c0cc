"""Official Python client of the architecture-portfolio API (`/api/v1`)."""

from ._client import DEFAULT_BASE_URL, Client, ClientWithResponse
from ._errors import (
    ApiError,
    ArchitecturePortfolioError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NetworkError,
    NetworkTimeoutError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    UnexpectedResponseError,
)
from ._operations import OPERATIONS
from ._pagination import Page
from ._resources import (
    Applications,
    ApplicationsWithResponse,
    Functions,
    FunctionsWithResponse,
    Invitations,
    InvitationsWithResponse,
)
from ._response import ApiResponse, RateLimit
from . import _types
from ._types import *  # noqa: F403 - the generated types are part of the public API
from ._version import __version__

__all__ = [
    "DEFAULT_BASE_URL",
    "OPERATIONS",
    "ApiError",
    "ApiResponse",
    "Applications",
    "ApplicationsWithResponse",
    "ArchitecturePortfolioError",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ClientWithResponse",
    "ConflictError",
    "Functions",
    "FunctionsWithResponse",
    "Invitations",
    "InvitationsWithResponse",
    "NetworkError",
    "NetworkTimeoutError",
    "NotFoundError",
    "Page",
    "PermissionDeniedError",
    "RateLimit",
    "RateLimitError",
    "ServerError",
    "ServiceUnavailableError",
    "UnexpectedResponseError",
    "__version__",
]
__all__ += _types.__all__
