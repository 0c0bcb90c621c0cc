from __future__ import annotations

from typing import Dict, Tuple

OPERATIONS: Dict[str, Tuple[str, str]] = {
    "applications.listApplications": ("applications", "list"),
    "applications.getApplication": ("applications", "get"),
    "applications.listApplicationChanges": ("applications", "changes"),
    "functions.getFunctionTree": ("functions", "tree"),
    "functions.listFunctionsFlat": ("functions", "flat"),
    "functions.getFunctionTreePosi": ("functions", "posi"),
    "functions.searchFunctions": ("functions", "search"),
    "functions.getFunctionStats": ("functions", "stats"),
    "functions.listFunctionsByApplication": ("functions", "by_application"),
    "functions.getFunction": ("functions", "get"),
    "invitations.createInvitation": ("invitations", "create"),
    "invitations.listInvitations": ("invitations", "list"),
    "invitations.listMembers": ("invitations", "members"),
    "invitations.revokeInvitation": ("invitations", "revoke"),
    "invitations.removeMember": ("invitations", "remove_member"),
}
"""Each operationId of the API's OpenAPI document -> (attribute of the client, method of that resource)."""
