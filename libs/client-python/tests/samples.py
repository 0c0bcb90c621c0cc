"""Documents shaped as the API answers them, for the unit tests."""

from __future__ import annotations

from architecture_portfolio import (
    Application,
    BusinessFunction,
    ChangeLogEntry,
    FunctionTreeNode,
    Invitation,
    Member,
    PosiTreeNode,
    ReferentialStats,
)

APPLICATION: Application = {
    "code": "CRM-01",
    "name": "Customer relations",
    "description": "Front office CRM",
    "parentCode": None,
    "status": "ACTIVE",
    "dataClassification": "RESTRICTED",
    "criticality": "MISSION_CRITICAL",
    "rtoHours": 4,
    "rpoHours": 0.5,
    "regulations": "DORA,RGPD",
    "roleAssignments": "OWNER:jane@corp.example",
    "licenseCost": 1250000,
    "supportCost": None,
    "infraCost": 300000,
    "staffCost": None,
    "annualCost": 1550000,
    "applicationVip": True,
    "contactIT": None,
    "contactMetier": None,
    "createdAt": "2026-06-01T09:00:00.000Z",
    "updatedAt": "2026-07-02T10:30:00.000Z",
}

CHANGE: ChangeLogEntry = {
    "id": "5b6c7d8e-9f00-4112-8234-56789abcdef0",
    "applicationCode": "CRM-01",
    "field": "criticality",
    "oldValue": "IMPORTANT",
    "newValue": "MISSION_CRITICAL",
    "changedBy": "auth0|5f1e",
    "changedAt": "2026-07-02T10:30:00.000Z",
}

FUNCTION: BusinessFunction = {
    "id": "7d3c2f4e-0b1a-4c5d-9e8f-1a2b3c4d5e6f",
    "code": "F-SALES",
    "name": "Sales",
    "description": None,
    "parentId": None,
    "level": 1,
    "path": ["F-SALES"],
    "applicationCodes": ["CRM-01"],
    "createdAt": "2026-06-01T09:00:00.000Z",
    "updatedAt": "2026-06-01T09:00:00.000Z",
}

TREE: FunctionTreeNode = {
    "id": FUNCTION["id"],
    "code": "F-SALES",
    "name": "Sales",
    "description": None,
    "parentId": None,
    "level": 1,
    "applicationCodes": ["CRM-01"],
    "createdAt": "2026-06-01T09:00:00.000Z",
    "updatedAt": "2026-06-01T09:00:00.000Z",
    "children": [],
}

POSI: PosiTreeNode = {
    "id": FUNCTION["id"],
    "code": "F-SALES",
    "name": "Sales",
    "description": None,
    "parentId": None,
    "level": 1,
    "applicationCodes": ["CRM-01"],
    "createdAt": "2026-06-01T09:00:00.000Z",
    "updatedAt": "2026-06-01T09:00:00.000Z",
    "applications": [
        {"code": "CRM-01", "name": "Customer relations", "parentCode": None, "parentName": None, "criticality": "MISSION_CRITICAL"}
    ],
    "children": [],
}

STATS: ReferentialStats = {
    "functionCount": 2,
    "rootFunctionCount": 1,
    "maxDepth": 2,
    "functionsWithoutApplication": 0,
    "applicationCount": 1,
    "applicationsWithoutFunction": 0,
    "linkCount": 2,
    "averageApplicationsPerFunction": 1.0,
    "applicationsByCriticality": {"MISSION_CRITICAL": 1},
    "applicationsByDataClassification": {"RESTRICTED": 1},
    "applicationsByStatus": {"ACTIVE": 1},
}

INVITATION: Invitation = {
    "id": "3f2e1d0c-bbaa-4998-8776-655443322110",
    "email": "new.architect@corp.example",
    "arbRole": "architect",
    "status": "PENDING",
    "invitedByEmail": "admin@corp.example",
    "expiresAt": "2026-11-29T08:00:00.000Z",
    "createdAt": "2026-11-22T08:00:00.000Z",
    "acceptedAt": None,
    "revokedAt": None,
}

MEMBER: Member = {
    "userSub": "auth0|5f1e",
    "userEmail": "admin@corp.example",
    "arbRole": "tenant-admin",
    "source": "SIGNUP",
    "grantedAt": "2026-06-01T09:00:00.000Z",
}
