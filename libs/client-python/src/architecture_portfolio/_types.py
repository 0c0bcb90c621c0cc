"""Types of the API's JSON documents, generated from libs/domain/openapi.json.

Do not edit: run `scripts/generate_types.py` after the contract changes. Objects are TypedDicts
with the wire's (camelCase) keys; enums are Literal aliases.
"""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, TypedDict

#: 1 to 64 characters: letters, digits, '.', '_' or '-', starting with a letter or digit. Pattern:
#: `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`.
ApplicationCode = str

#: a Universally Unique Identifier
FunctionId = str

#: Non-negative number of hours, decimals allowed.
Hours = float

#: Amount in minor units (cents), 64-bit integer.
MinorUnits = int

#: ISO 8601 UTC timestamp.
DateTimeUtc = str

#: an integer
Int = int

#: a Universally Unique Identifier
UUID = str

ApplicationStatus = Literal["ACTIVE", "PLANNED", "DEPRECATED", "RETIRED"]

DataClassification = Literal["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"]

Criticality = Literal["MISSION_CRITICAL", "IMPORTANT", "NOMINAL", "LOW"]

ChangeLogField = Literal[
    "criticality",
    "rtoHours",
    "rpoHours",
    "dataClassification",
    "regulations",
    "roleAssignments",
    "licenseCost",
    "supportCost",
    "infraCost",
    "staffCost",
    "status",
]

ArbRole = Literal["tenant-admin", "architect", "portfolio-manager", "contributor", "viewer", "arb-member"]

InvitationStatus = Literal["PENDING", "ACCEPTED", "REVOKED", "EXPIRED"]

ErrorCode = Literal[
    "INVALID_INVITATION_PARAM",
    "INVALID_REGULATION",
    "INVALID_REQUEST",
    "UNAUTHENTICATED",
    "INSUFFICIENT_SCOPE",
    "NOT_FOUND",
    "ALREADY_INVITED",
    "INVITATION_NOT_PENDING",
    "LAST_TENANT_ADMIN",
    "MEMBER_REMOVED",
    "CONFLICT",
    "REQUEST_TIMEOUT",
    "PAYLOAD_TOO_LARGE",
    "UNSUPPORTED_MEDIA_TYPE",
    "RATE_LIMITED",
    "REQUEST_HEADER_FIELDS_TOO_LARGE",
    "INTERNAL",
    "UNAVAILABLE",
]

MemberSource = Literal["SIGNUP", "INVITATION", "SSO_JIT"]

Regulation = Literal["DORA", "NIS2", "RGPD", "PCI_DSS", "HDS", "ISO_27001"]


class Application(TypedDict):
    """The `Application` schema."""

    code: ApplicationCode
    name: str
    description: Optional[str]
    parentCode: Optional[ApplicationCode]
    status: ApplicationStatus
    dataClassification: DataClassification
    criticality: Criticality
    rtoHours: Optional[Hours]
    rpoHours: Optional[Hours]
    #: Comma-separated tokens among DORA, NIS2, RGPD, PCI_DSS, HDS, ISO_27001; empty when none.
    regulations: str
    #: Comma-separated ROLE:contact pairs.
    roleAssignments: str
    licenseCost: Optional[MinorUnits]
    supportCost: Optional[MinorUnits]
    infraCost: Optional[MinorUnits]
    staffCost: Optional[MinorUnits]
    #: Deprecated, removed in v0.1.88. Sum of the four cost fields when at least one is set, otherwise
    #: the legacy single amount.
    annualCost: Optional[MinorUnits]
    #: Deprecated, removed in v0.1.88. True when criticality is MISSION_CRITICAL.
    applicationVip: bool
    #: Deprecated, removed in v0.1.88. First TECH_LEAD of roleAssignments.
    contactIT: Optional[str]
    #: Deprecated, removed in v0.1.88. First PRODUCT_OWNER of roleAssignments.
    contactMetier: Optional[str]
    createdAt: DateTimeUtc
    updatedAt: DateTimeUtc


class ProblemInvalidRequest(TypedDict):
    """Invalid request: the `Problem.INVALID_REQUEST` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["INVALID_REQUEST"]


class ProblemUnauthenticated(TypedDict):
    """Unauthenticated: the `Problem.UNAUTHENTICATED` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["UNAUTHENTICATED"]


class ProblemInsufficientScope(TypedDict):
    """Insufficient scope: the `Problem.INSUFFICIENT_SCOPE` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["INSUFFICIENT_SCOPE"]


class ProblemRateLimited(TypedDict):
    """Too many requests: the `Problem.RATE_LIMITED` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["RATE_LIMITED"]


class ProblemUnavailable(TypedDict):
    """Service unavailable: the `Problem.UNAVAILABLE` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["UNAVAILABLE"]


class ProblemNotFound(TypedDict):
    """Not found: the `Problem.NOT_FOUND` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["NOT_FOUND"]


class ChangeLogEntry(TypedDict):
    """The `ChangeLogEntry` schema."""

    id: UUID
    applicationCode: ApplicationCode
    field: ChangeLogField
    oldValue: Optional[str]
    newValue: Optional[str]
    changedBy: str
    changedAt: DateTimeUtc


class FunctionTreeNode(TypedDict):
    """The `FunctionTreeNode` schema."""

    id: FunctionId
    code: str
    name: str
    description: Optional[str]
    parentId: Optional[FunctionId]
    level: Int
    applicationCodes: List[ApplicationCode]
    createdAt: DateTimeUtc
    updatedAt: DateTimeUtc
    children: List[FunctionTreeNode]


class BusinessFunction(TypedDict):
    """The `BusinessFunction` schema."""

    id: FunctionId
    code: str
    name: str
    description: Optional[str]
    parentId: Optional[FunctionId]
    #: Depth in the tree; roots are at level 1.
    level: int
    #: Codes from the root down to this function.
    path: List[str]
    applicationCodes: List[ApplicationCode]
    createdAt: DateTimeUtc
    updatedAt: DateTimeUtc


class PosiTreeNode(TypedDict):
    """The `PosiTreeNode` schema."""

    id: FunctionId
    code: str
    name: str
    description: Optional[str]
    parentId: Optional[FunctionId]
    level: Int
    applicationCodes: List[ApplicationCode]
    createdAt: DateTimeUtc
    updatedAt: DateTimeUtc
    applications: List[LinkedApplication]
    children: List[PosiTreeNode]


class ReferentialStats(TypedDict):
    """The `ReferentialStats` schema."""

    functionCount: Int
    rootFunctionCount: Int
    maxDepth: Int
    functionsWithoutApplication: Int
    applicationCount: Int
    applicationsWithoutFunction: Int
    linkCount: Int
    averageApplicationsPerFunction: float
    applicationsByCriticality: Dict[str, Int]
    applicationsByDataClassification: Dict[str, Int]
    applicationsByStatus: Dict[str, Int]


class Invitation(TypedDict):
    """The `Invitation` schema."""

    id: UUID
    email: str
    arbRole: ArbRole
    status: InvitationStatus
    invitedByEmail: str
    expiresAt: DateTimeUtc
    createdAt: DateTimeUtc
    acceptedAt: Optional[DateTimeUtc]
    revokedAt: Optional[DateTimeUtc]


class ProblemInvalidInvitationParam(TypedDict):
    """Invalid invitation parameter: the `Problem.INVALID_INVITATION_PARAM` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["INVALID_INVITATION_PARAM"]


class ProblemAlreadyInvited(TypedDict):
    """Conflict: the `Problem.ALREADY_INVITED` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["ALREADY_INVITED"]


class Problem(TypedDict):
    """RFC 9457 problem details, with the stable `errorCode` extension member."""

    #: `{errors_url}/<slug>`; the page at `{base_url}/errors/<slug>` explains it.
    type: str
    #: Short name of the error, for humans.
    title: str
    #: HTTP status.
    status: int
    #: What went wrong with this request.
    detail: str
    #: Path of the request.
    instance: str
    #: Stable UPPER_SNAKE code; compare this, never the title.
    errorCode: ErrorCode


class InvitationRequest(TypedDict):
    """The `InvitationRequest` schema."""

    #: Invitee address.
    email: str
    #: One of tenant-admin, architect, portfolio-manager, contributor, viewer, arb-member.
    arbRole: str


class Member(TypedDict):
    """The `Member` schema."""

    userSub: str
    userEmail: str
    arbRole: ArbRole
    source: MemberSource
    grantedAt: DateTimeUtc


class ProblemInvitationNotPending(TypedDict):
    """Conflict: the `Problem.INVITATION_NOT_PENDING` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["INVITATION_NOT_PENDING"]


class ProblemLastTenantAdmin(TypedDict):
    """Conflict: the `Problem.LAST_TENANT_ADMIN` schema."""

    #: URI `{errors_url}/<slug>`; its page explains the error.
    type: str
    title: str
    status: Int
    detail: str
    #: Path of the request that failed.
    instance: str
    errorCode: Literal["LAST_TENANT_ADMIN"]


class LinkedApplication(TypedDict):
    """The `LinkedApplication` schema."""

    code: ApplicationCode
    name: str
    parentCode: Optional[ApplicationCode]
    parentName: Optional[str]
    criticality: Criticality


__all__ = [
    "Application",
    "ApplicationCode",
    "ApplicationStatus",
    "ArbRole",
    "BusinessFunction",
    "ChangeLogEntry",
    "ChangeLogField",
    "Criticality",
    "DataClassification",
    "DateTimeUtc",
    "ErrorCode",
    "FunctionId",
    "FunctionTreeNode",
    "Hours",
    "Int",
    "Invitation",
    "InvitationRequest",
    "InvitationStatus",
    "LinkedApplication",
    "Member",
    "MemberSource",
    "MinorUnits",
    "PosiTreeNode",
    "Problem",
    "ProblemAlreadyInvited",
    "ProblemInsufficientScope",
    "ProblemInvalidInvitationParam",
    "ProblemInvalidRequest",
    "ProblemInvitationNotPending",
    "ProblemLastTenantAdmin",
    "ProblemNotFound",
    "ProblemRateLimited",
    "ProblemUnauthenticated",
    "ProblemUnavailable",
    "ReferentialStats",
    "Regulation",
    "UUID",
]
