import type { PortfolioClient } from "./client.js"
import type { OperationId } from "./types.js"

type Resource = "applications" | "functions" | "invitations"
type MethodOf<R extends Resource> = { [M in keyof PortfolioClient[R]]: PortfolioClient[R][M] extends (...args: never) => unknown ? M : never }[keyof PortfolioClient[R]]
type Operation = { [R in Resource]: { readonly resource: R; readonly method: MethodOf<R> } }[Resource]

/**
 * Every operation of the API (its operationId in openapi.json) with the method that calls it:
 * `client[resource][method]`. Type-checked to name every operationId and only real methods.
 */
export const operations = {
  "applications.listApplications": { resource: "applications", method: "list" },
  "applications.getApplication": { resource: "applications", method: "get" },
  "applications.listApplicationChanges": { resource: "applications", method: "changes" },
  "functions.getFunctionTree": { resource: "functions", method: "tree" },
  "functions.listFunctionsFlat": { resource: "functions", method: "flat" },
  "functions.getFunctionTreePosi": { resource: "functions", method: "posi" },
  "functions.searchFunctions": { resource: "functions", method: "search" },
  "functions.getFunctionStats": { resource: "functions", method: "stats" },
  "functions.listFunctionsByApplication": { resource: "functions", method: "byApplication" },
  "functions.getFunction": { resource: "functions", method: "get" },
  "invitations.createInvitation": { resource: "invitations", method: "create" },
  "invitations.listInvitations": { resource: "invitations", method: "list" },
  "invitations.listMembers": { resource: "invitations", method: "members" },
  "invitations.revokeInvitation": { resource: "invitations", method: "revoke" },
  "invitations.removeMember": { resource: "invitations", method: "removeMember" }
} as const satisfies Record<OperationId, Operation>
