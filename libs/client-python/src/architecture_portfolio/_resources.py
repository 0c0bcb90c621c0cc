"""The API's resources. Each `*WithResponse` class builds the requests and answers `ApiResponse`s;
the plain classes, what `client.applications` and the others are, answer their `data` only."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional
from urllib.parse import quote

from ._pagination import Page
from ._response import ApiResponse
from ._types import (
    Application,
    ApplicationStatus,
    ArbRole,
    BusinessFunction,
    ChangeLogEntry,
    Criticality,
    DataClassification,
    FunctionTreeNode,
    Invitation,
    InvitationRequest,
    Member,
    PosiTreeNode,
    ReferentialStats,
    Regulation,
)

if TYPE_CHECKING:
    from ._client import Client


def _segment(name: str, value: str) -> str:
    """A path parameter, percent-encoded so that `/`, `?` or `#` in it stay inside its segment."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if not value:
        # An empty segment would silently address another endpoint (".../applications/" is the list).
        raise ValueError(f"{name} must not be empty")
    if value in (".", ".."):
        # So would a dot segment, which URLs resolve away ("/applications/.." is "/"); quote() leaves
        # dots as they are, and the TypeScript client's URL parser drops even an encoded one.
        raise ValueError(f'{name} cannot be "{value}", a URL drops such a path segment')
    return quote(value, safe="")


class ApplicationsWithResponse:
    """`client.with_response.applications`: the methods of `Applications`, answering `ApiResponse`s."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def list(
        self,
        *,
        data_class: Optional[DataClassification] = None,
        criticality: Optional[Criticality] = None,
        regulation: Optional[Regulation] = None,
        status: Optional[ApplicationStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> ApiResponse[Page[Application]]:
        query = {
            "data_class": data_class,
            "criticality": criticality,
            "regulation": regulation,
            "status": status if status is not None else "ACTIVE",
            "limit": limit,
            "cursor": cursor,
        }
        return self._client._request_page("/referentiel/applications", query)

    def get(self, code: str) -> ApiResponse[Application]:
        return self._client._request("GET", f"/referentiel/applications/{_segment('code', code)}")

    def changes(
        self, code: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> ApiResponse[Page[ChangeLogEntry]]:
        path = f"/referentiel/applications/{_segment('code', code)}/changes"
        return self._client._request_page(path, {"limit": limit, "cursor": cursor})


class FunctionsWithResponse:
    """`client.with_response.functions`: the methods of `Functions`, answering `ApiResponse`s."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def tree(self) -> ApiResponse[List[FunctionTreeNode]]:
        return self._client._request("GET", "/referentiel/functions")

    def flat(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> ApiResponse[Page[BusinessFunction]]:
        return self._client._request_page("/referentiel/functions/flat", {"limit": limit, "cursor": cursor})

    def posi(self) -> ApiResponse[List[PosiTreeNode]]:
        return self._client._request("GET", "/referentiel/functions/posi")

    def search(
        self, query: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> ApiResponse[Page[BusinessFunction]]:
        return self._client._request_page("/referentiel/functions/search", {"q": query, "limit": limit, "cursor": cursor})

    def stats(self) -> ApiResponse[ReferentialStats]:
        return self._client._request("GET", "/referentiel/functions/stats")

    def by_application(
        self, code: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> ApiResponse[Page[BusinessFunction]]:
        path = f"/referentiel/functions/by-application/{_segment('code', code)}"
        return self._client._request_page(path, {"limit": limit, "cursor": cursor})

    def get(self, function_id: str) -> ApiResponse[BusinessFunction]:
        return self._client._request("GET", f"/referentiel/functions/{_segment('function_id', function_id)}")


class InvitationsWithResponse:
    """`client.with_response.invitations`: the methods of `Invitations`, answering `ApiResponse`s."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def create(self, *, email: str, arb_role: ArbRole) -> ApiResponse[Invitation]:
        body: InvitationRequest = {"email": email, "arbRole": arb_role}
        return self._client._request("POST", "/tenant/invitations", body=body)

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> ApiResponse[Page[Invitation]]:
        return self._client._request_page("/tenant/invitations", {"limit": limit, "cursor": cursor})

    def members(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> ApiResponse[Page[Member]]:
        return self._client._request_page("/tenant/invitations/members", {"limit": limit, "cursor": cursor})

    def revoke(self, invitation_id: str) -> ApiResponse[None]:
        return self._client._request("DELETE", f"/tenant/invitations/{_segment('invitation_id', invitation_id)}")

    def remove_member(self, user_sub: str) -> ApiResponse[None]:
        return self._client._request("DELETE", f"/tenant/invitations/members/{_segment('user_sub', user_sub)}")


class Applications:
    """`client.applications`: the tenant's applications and their change log."""

    def __init__(self, raw: ApplicationsWithResponse) -> None:
        self._raw = raw

    def list(
        self,
        *,
        data_class: Optional[DataClassification] = None,
        criticality: Optional[Criticality] = None,
        regulation: Optional[Regulation] = None,
        status: Optional[ApplicationStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Application]:
        """Applications sorted by code, filtered by every filter given (AND).

        Without `status` only ACTIVE applications are listed. Without `limit` and `cursor` the
        whole list comes in one answer; with them, one page (`auto_paging_iter()` goes on).
        """
        return self._raw.list(
            data_class=data_class,
            criticality=criticality,
            regulation=regulation,
            status=status,
            limit=limit,
            cursor=cursor,
        ).data

    def get(self, code: str) -> Application:
        """One application by its code; NotFoundError when the tenant has none with that code."""
        return self._raw.get(code).data

    def changes(self, code: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[ChangeLogEntry]:
        """The application's change log, newest first: 50 entries unless `limit` says otherwise (200 at most)."""
        return self._raw.changes(code, limit=limit, cursor=cursor).data


class Functions:
    """`client.functions`: the business-function referential."""

    def __init__(self, raw: FunctionsWithResponse) -> None:
        self._raw = raw

    def tree(self) -> List[FunctionTreeNode]:
        """The root functions, each with its `children`, recursively."""
        return self._raw.tree().data

    def flat(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[BusinessFunction]:
        """Every function as one list, each with its `path` of codes from the root."""
        return self._raw.flat(limit=limit, cursor=cursor).data

    def posi(self) -> List[PosiTreeNode]:
        """The function tree with the applications linked to each function."""
        return self._raw.posi().data

    def search(self, query: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[BusinessFunction]:
        """Functions whose code, name or description contains `query` (1 to 200 characters, any case)."""
        return self._raw.search(query, limit=limit, cursor=cursor).data

    def stats(self) -> ReferentialStats:
        """Counts over functions, applications and the links between them."""
        return self._raw.stats().data

    def by_application(
        self, code: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[BusinessFunction]:
        """The functions an application is linked to; NotFoundError for an unknown application."""
        return self._raw.by_application(code, limit=limit, cursor=cursor).data

    def get(self, function_id: str) -> BusinessFunction:
        """One function by its id (a UUID)."""
        return self._raw.get(function_id).data


class Invitations:
    """`client.invitations`: the tenant's invitations and members (write-scope token of a tenant-admin)."""

    def __init__(self, raw: InvitationsWithResponse) -> None:
        self._raw = raw

    def create(self, *, email: str, arb_role: ArbRole) -> Invitation:
        """Invites `email` with the role `arb_role`; a PENDING invitation for that address is a ConflictError ALREADY_INVITED."""
        return self._raw.create(email=email, arb_role=arb_role).data

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Invitation]:
        """Invitations of every status, newest first."""
        return self._raw.list(limit=limit, cursor=cursor).data

    def members(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Member]:
        """Active members, most recently granted first."""
        return self._raw.members(limit=limit, cursor=cursor).data

    def revoke(self, invitation_id: str) -> None:
        """Revokes a PENDING invitation; ConflictError INVITATION_NOT_PENDING otherwise."""
        self._raw.revoke(invitation_id)

    def remove_member(self, user_sub: str) -> None:
        """Removes a member at once (irreversible); ConflictError LAST_TENANT_ADMIN for the last tenant-admin."""
        self._raw.remove_member(user_sub)
