import type { components, operations as Operations, routes } from "./generated/openapi.js"

/*
 * Every type of the API is taken from the types generated from libs/domain/openapi.json, so that a
 * change of the contract shows up here at the next `npm run generate`, never by hand.
 */
type Schemas = components["schemas"]

export type Application = Schemas["Application"]
export type ApplicationCode = Schemas["ApplicationCode"]
export type ChangeLogEntry = Schemas["ChangeLogEntry"]
export type BusinessFunction = Schemas["BusinessFunction"]
export type FunctionTreeNode = Schemas["FunctionTreeNode"]
export type PosiTreeNode = Schemas["PosiTreeNode"]
export type LinkedApplication = Schemas["LinkedApplication"]
export type ReferentialStats = Schemas["ReferentialStats"]
export type Invitation = Schemas["Invitation"]
export type InvitationRequest = Schemas["InvitationRequest"]
export type Member = Schemas["Member"]
/** The body of every error answer (`application/problem+json`, RFC 9457). */
export type Problem = Schemas["Problem"]
/** The stable codes of `Problem.errorCode`: compare these, never the title. */
export type ErrorCode = Problem["errorCode"]

export type ApplicationStatus = Application["status"]
export type DataClassification = Application["dataClassification"]
export type Criticality = Application["criticality"]
export type Regulation = NonNullable<Query<"applications.listApplications">["regulation"]>
export type ArbRole = Invitation["arbRole"]
export type InvitationStatus = Invitation["status"]
export type MemberSource = Member["source"]

/** The operationIds of openapi.json. */
export type OperationId = keyof typeof routes

type OperationParameters<Id extends OperationId> = Operations[Id]["parameters"]

/** The path parameters of an operation, or `undefined` when its path has none. */
export type PathParams<Id extends OperationId> = OperationParameters<Id> extends { path: infer P } ? P : undefined

/** The query parameters of an operation under their wire names; `undefined` values are not sent. */
export type Query<Id extends OperationId> = { [K in keyof NonNullable<OperationParameters<Id>["query"]>]?: NonNullable<OperationParameters<Id>["query"]>[K] | undefined }

/** The JSON request body of an operation, `never` when it takes none. */
export type RequestBody<Id extends OperationId> = Operations[Id] extends { requestBody: { content: { "application/json": infer B } } } ? B : never

type Json<R> = R extends { content: { "application/json": infer B } } ? B : void
type Responses<Id extends OperationId> = Operations[Id]["responses"]

/** What an operation answers on success: the JSON of its 200 or 201 answer, `void` for a 204. */
export type Result<Id extends OperationId> =
  200 extends keyof Responses<Id> ? Json<Responses<Id>[200]> : 201 extends keyof Responses<Id> ? Json<Responses<Id>[201]> : void

/** The item type of a list operation. */
export type Item<Id extends OperationId> = Result<Id> extends ReadonlyArray<infer I> ? I : never

/** Page parameters of every paginated list. */
export interface PageParams {
  /** Page size (1 or more; the server caps it). Without `limit` and `cursor` the whole list is answered at once. */
  limit?: number | undefined
  /** Opaque cursor taken from a previous page's `Link: <...>; rel="next"` header. */
  cursor?: string | undefined
}

type ListApplicationsQuery = Query<"applications.listApplications">

/** Filters of `applications.list`, combined with AND. */
export interface ApplicationListParams extends PageParams {
  dataClass?: ListApplicationsQuery["data_class"]
  criticality?: ListApplicationsQuery["criticality"]
  regulation?: ListApplicationsQuery["regulation"]
  /** Defaults to `ACTIVE`: the official clients list active applications unless told otherwise. */
  status?: ListApplicationsQuery["status"]
}

/** The body of `invitations.create`. */
export interface InvitationCreateParams {
  email: InvitationRequest["email"]
  arbRole: ArbRole
}
