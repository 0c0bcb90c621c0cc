import type { HttpServerResponse } from "effect/http"
import { type ErrorCode, ScimMediaType, scimError } from "@portfolio/domain"
import { answerResponse, type ProblemAnswer, problemAnswer, writeAnswer } from "@portfolio/platform/http"
import type { ServerResponse } from "node:http"
import { isScimPath } from "../../domain/AllowList.js"

/**
 * The gateway's own answer to a call it refuses or fails: problem+json, except under the SCIM
 * prefix, where identity tools read SCIM errors only (docs/scim.md, "Errors", RFC 7644 3.12).
 * Status and headers are the problem's either way (rate-limit headers, Retry-After, the request
 * id, WWW-Authenticate), so that an identity tool waits and retries as any client does.
 * `instance` is the request's path, or its target as sent when it has none.
 */
export const refusalAnswer = (
  errorsUrl: string,
  errorCode: ErrorCode,
  detail: string,
  instance: string,
  headers: Record<string, string> = {}
): ProblemAnswer => {
  const problem = problemAnswer(errorsUrl, errorCode, detail, instance, headers)
  return isScimPath(instance) ? { ...problem, contentType: ScimMediaType, body: JSON.stringify(scimError(problem.status, detail)) } : problem
}

/** `refusalAnswer` written on a node response: the proxy's hot path. */
export const writeRefusal = (
  target: ServerResponse,
  errorsUrl: string,
  errorCode: ErrorCode,
  detail: string,
  instance: string,
  headers: Record<string, string> = {}
): void => writeAnswer(target, refusalAnswer(errorsUrl, errorCode, detail, instance, headers))

/** `refusalAnswer` as an Effect server sends it: the public app's answers. */
export const refusalResponse = (
  errorsUrl: string,
  errorCode: ErrorCode,
  detail: string,
  instance: string,
  headers: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse => answerResponse(refusalAnswer(errorsUrl, errorCode, detail, instance, headers))
