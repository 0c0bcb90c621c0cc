export { PortfolioClient } from "./client.js"
export type { ClientOptions, Fetch, FetchInit, RequestOptions } from "./transport.js"
export { ApiPromise, PagePromise, type ApiResponse } from "./api-promise.js"
export {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NetworkError,
  NetworkTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  PortfolioError,
  RateLimitError,
  ServerError,
  ServiceUnavailableError,
  type RateLimit
} from "./errors.js"
export { operations } from "./operations.js"
export { VERSION } from "./version.js"
export type { Applications } from "./resources/applications.js"
export type { Functions } from "./resources/functions.js"
export type { Invitations } from "./resources/invitations.js"
export type {
  Application,
  ApplicationCode,
  ApplicationListParams,
  ApplicationStatus,
  ArbRole,
  BusinessFunction,
  ChangeLogEntry,
  Criticality,
  DataClassification,
  ErrorCode,
  FunctionTreeNode,
  Invitation,
  InvitationCreateParams,
  InvitationRequest,
  InvitationStatus,
  LinkedApplication,
  Member,
  MemberSource,
  OperationId,
  PageParams,
  PosiTreeNode,
  Problem,
  ReferentialStats,
  Regulation
} from "./types.js"
