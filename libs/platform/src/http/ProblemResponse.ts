import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { type ErrorCode, isApiError, makeProblem, problemContentType } from "@portfolio/domain"
import { Cause, Config, Context, Effect, Layer, Option } from "effect"
import type { ServerResponse } from "node:http"
import { isDependencyDown } from "./DependencyDown.js"

/** Base URI of the `type` member of problem bodies (`ERRORS_URL`). */
export class ErrorsUrl extends Context.Tag("@portfolio/platform/ErrorsUrl")<ErrorsUrl, string>() {
  static readonly layer = Layer.effect(
    ErrorsUrl,
    Config.string("ERRORS_URL").pipe(Config.withDefault("https://errors.architecture-portfolio.dev/api"))
  )
}

/** Seconds a client is told to wait after a 503 that does not say otherwise. */
export const unavailableRetryAfterSeconds = 5

/** A problem+json answer, ready to be sent by an Effect server or written on a node response. */
export interface ProblemAnswer {
  readonly status: number
  /** The caller's headers, plus `retry-after` on a 503 that has none; without the content type. */
  readonly headers: Record<string, string>
  /** `application/problem+json`, unless a caller answers in another error format (the gateway's SCIM errors). */
  readonly contentType: string
  readonly body: string
}

/**
 * The one writer of problem bodies: every error of the platform, whether answered by an Effect
 * HttpApi server or by the gateway's node hot path, is built here.
 */
export const problemAnswer = (
  errorsUrl: string,
  errorCode: ErrorCode,
  detail: string,
  instance: string,
  headers: Record<string, string> = {}
): ProblemAnswer => {
  const problem = makeProblem({ errorCode, detail, instance, errorsUrl })
  // Every 503 tells the client when to come back (docs/product-rules.md#errors), unless the caller said otherwise.
  const retry = problem.status === 503 && headers["retry-after"] === undefined ? { "retry-after": String(unavailableRetryAfterSeconds) } : {}
  return {
    status: problem.status,
    headers: { ...headers, ...retry },
    contentType: problemContentType,
    body: JSON.stringify({
      type: problem.type,
      title: problem.title,
      status: problem.status,
      detail: problem.detail,
      instance: problem.instance,
      errorCode: problem.errorCode
    })
  }
}

/** An answer of `problemAnswer`'s shape as an Effect server sends it. */
export const answerResponse = (answer: ProblemAnswer): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(answer.body, { status: answer.status, contentType: answer.contentType, headers: answer.headers })

/** An answer of `problemAnswer`'s shape written on a node response, for servers that answer outside Effect's router. */
export const writeAnswer = (target: ServerResponse, answer: ProblemAnswer): void => {
  target.writeHead(answer.status, {
    ...answer.headers,
    "content-type": answer.contentType,
    "content-length": Buffer.byteLength(answer.body)
  })
  target.end(answer.body)
}

export const problemResponse = (
  errorsUrl: string,
  errorCode: ErrorCode,
  detail: string,
  instance: string,
  headers: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse => answerResponse(problemAnswer(errorsUrl, errorCode, detail, instance, headers))

/** The same answer written on a node response, for servers that answer outside Effect's router. */
export const writeProblem = (
  target: ServerResponse,
  errorsUrl: string,
  errorCode: ErrorCode,
  detail: string,
  instance: string,
  headers: Record<string, string> = {}
): void => writeAnswer(target, problemAnswer(errorsUrl, errorCode, detail, instance, headers))

interface Tagged {
  readonly _tag: string
}
const hasTag = (u: unknown): u is Tagged => typeof u === "object" && u !== null && "_tag" in u

interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** A readable sentence out of a schema failure: which input, where, and what was expected. */
const describeDecodeError = (error: { readonly message: string; readonly issues?: ReadonlyArray<DecodeIssue> }): string => {
  const issues = error.issues ?? []
  if (issues.length === 0) return error.message
  return issues
    .slice(0, 5)
    .map((issue) => clip(issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message))
    .join("; ")
}

/**
 * A schema message quotes the value it refused: a 1 MiB array would come back whole in `detail`.
 * What names the input and the expectation fits in a few hundred characters.
 */
const MaxIssueLength = 300
const clip = (text: string) => (text.length <= MaxIssueLength ? text : `${text.slice(0, MaxIssueLength)}... (${text.length - MaxIssueLength} more characters)`)

/**
 * What any failure of a request becomes on the wire. Expected errors keep their code; schema and
 * routing failures get theirs; a database that cannot be reached gives 503; everything else is
 * logged with its cause and answered with a bare 500 that names nothing internal.
 */
export const problemFromCause = (cause: Cause.Cause<unknown>, instance: string) =>
  Effect.gen(function*() {
    const errorsUrl = yield* ErrorsUrl
    // HttpApiBuilder reads the body with `orDie`, so an unreadable body arrives as a defect.
    const failure = Option.orElse(Cause.failureOption(cause), () =>
      Option.filter(Cause.dieOption(cause), (defect) => hasTag(defect) && defect._tag === "RequestError"))
    if (Option.isSome(failure)) {
      const error = failure.value
      if (isApiError(error)) return problemResponse(errorsUrl, error.errorCode, error.detail, instance)
      if (hasTag(error)) {
        switch (error._tag) {
          case "HttpApiDecodeError":
            return problemResponse(errorsUrl, "INVALID_REQUEST", describeDecodeError(error as never), instance)
          case "RouteNotFound":
            return problemResponse(errorsUrl, "NOT_FOUND", "No such endpoint.", instance)
          case "RequestError": {
            const reason = (error as unknown as { reason?: string; description?: string })
            const tooLarge = /size|large|limit/i.test(`${reason.description ?? ""}`)
            return tooLarge
              ? problemResponse(errorsUrl, "PAYLOAD_TOO_LARGE", "The request body exceeds the size limit.", instance)
              : problemResponse(errorsUrl, "INVALID_REQUEST", "The request body could not be read as JSON.", instance)
          }
        }
      }
    }
    if (Cause.defects(cause).pipe((defects) => Array.from(defects).some(isDependencyDown))) {
      yield* Effect.logWarning("request failed: a dependency is unavailable", cause)
      return problemResponse(errorsUrl, "UNAVAILABLE", "A dependency of the service is unavailable. Retry later.", instance)
    }
    yield* Effect.logError("request failed", cause)
    return problemResponse(errorsUrl, "INTERNAL", "An internal error occurred. It has been logged.", instance)
  })

/** HttpApi-level middleware turning every failure of every endpoint into problem+json. */
export const ProblemMiddlewareLive = HttpApiBuilder.middleware(
  Effect.gen(function*() {
    const errorsUrl = yield* ErrorsUrl
    return (app) =>
      Effect.catchAllCause(app, (cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
            problemFromCause(cause, new URL(request.url, "http://x").pathname).pipe(
              Effect.provideService(ErrorsUrl, errorsUrl)
            )))
  })
)
