import { HttpApiError } from "effect/http-api"
import { HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { type ErrorCode, GatewayAdminProblems, isApiError, makeProblem, problemContentType, Problems, PublicProblems } from "@portfolio/domain"
import { Cause, Config, Context, Effect, Layer, Option, type Schema, type Types } from "effect"
import { decodeIssues } from "./SchemaMessages.js"
import type { ServerResponse } from "node:http"
import { isDependencyDown } from "./DependencyDown.js"

/** Base URI of the `type` member of problem bodies (`ERRORS_URL`). */
export class ErrorsUrl extends Context.Service<ErrorsUrl, string>()("@portfolio/platform/ErrorsUrl") {
  static readonly layer = Layer.effect(
    ErrorsUrl,
    Config.String("ERRORS_URL").pipe(Config.withDefault("https://errors.architecture-portfolio.dev/api"))
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

/** A readable sentence out of a schema failure: which input, where, and what was expected (`SchemaMessages.ts`). */
const describeDecodeError = (error: Schema.SchemaError): string =>
  decodeIssues(error.issue)
    .slice(0, 5)
    .map((issue) => clip(issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message))
    .join("; ")

/**
 * A schema message quotes the value it refused: a 1 MiB array would come back whole in `detail`.
 * What names the input and the expectation fits in a few hundred characters.
 */
const MaxIssueLength = 300
const clip = (text: string) => (text.length <= MaxIssueLength ? text : `${text.slice(0, MaxIssueLength)}... (${text.length - MaxIssueLength} more characters)`)

/** The decoder's word for a body that is not JSON at all. */
const notJson = (error: HttpApiError.HttpApiSchemaError) =>
  error.kind === "Payload" && error.cause.issue._tag === "InvalidValue" && error.cause.issue.annotations?.["message"] === "Expected a valid JSON body"

/** The answer to a request failure Effect's HTTP stack or a contract names, or `undefined` for anything else. */
const knownProblem = (errorsUrl: string, error: unknown, instance: string): HttpServerResponse.HttpServerResponse | undefined => {
  if (isApiError(error)) return problemResponse(errorsUrl, error.errorCode, error.detail, instance)
  if (HttpApiError.HttpApiSchemaError.is(error)) {
    // A response its own schema refuses is the server's fault, not the request's.
    if (error.kind === "Body" || error.kind === "ResponseHeaders") return undefined
    return notJson(error)
      ? problemResponse(errorsUrl, "INVALID_REQUEST", "The request body could not be read as JSON.", instance)
      : problemResponse(errorsUrl, "INVALID_REQUEST", describeDecodeError(error.cause), instance)
  }
  if (HttpApiError.HttpApiPayloadTooLarge.is(error)) return problemResponse(errorsUrl, "PAYLOAD_TOO_LARGE", "The request body exceeds the size limit.", instance)
  if (HttpServerError.isHttpServerError(error)) {
    switch (error.reason._tag) {
      case "RouteNotFound":
        return problemResponse(errorsUrl, "NOT_FOUND", "No such endpoint.", instance)
      case "RequestParseError":
        return error.reason.reason === "BodyTooLarge"
          ? problemResponse(errorsUrl, "PAYLOAD_TOO_LARGE", "The request body exceeds the size limit.", instance)
          : problemResponse(errorsUrl, "INVALID_REQUEST", "The request body could not be read as JSON.", instance)
    }
  }
  return undefined
}

/**
 * What any failure of a request becomes on the wire. Expected errors keep their code; schema and
 * routing failures get theirs; a database that cannot be reached gives 503; everything else is
 * logged with its cause and answered with a bare 500 that names nothing internal.
 */
export const problemFromCause = (cause: Cause.Cause<unknown>, instance: string) =>
  Effect.gen(function*() {
    const errorsUrl = yield* ErrorsUrl
    const failure = Cause.findErrorOption(cause)
    if (Option.isSome(failure)) {
      const known = knownProblem(errorsUrl, failure.value, instance)
      if (known !== undefined) return known
    }
    // HttpApiBuilder reads the body with `orDie`, so an unreadable body arrives as a defect.
    const defects = cause.reasons.filter(Cause.isDieReason).map((reason) => reason.defect)
    for (const defect of defects) {
      const known = knownProblem(errorsUrl, defect, instance)
      if (known !== undefined) return known
    }
    if (defects.some(isDependencyDown)) {
      yield* Effect.logWarning("request failed: a dependency is unavailable", cause)
      return problemResponse(errorsUrl, "UNAVAILABLE", "A dependency of the service is unavailable. Retry later.", instance)
    }
    yield* Effect.logError("request failed", cause)
    return problemResponse(errorsUrl, "INTERNAL", "An internal error occurred. It has been logged.", instance)
  })

/** The path of a request target, as the `instance` of its problem. */
const instanceOf = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://x").pathname

/** `app` with every failure but an interruption answered as problem+json. */
const answeringProblems = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>, errorsUrl: string) =>
  Effect.catchCause(app, (cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause)
      : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        problemFromCause(cause, instanceOf(request)).pipe(Effect.provideService(ErrorsUrl, errorsUrl))))

/**
 * The contracts' problems middlewares (`@portfolio/domain` `problemMiddlewares`), outermost on every
 * endpoint: a failure of the endpoint (its declared errors, a request its schemas refuse, a
 * defect) is answered here, with `type` under `ERRORS_URL` and the request's path as `instance`,
 * before Effect would encode it with the contract's bare schema.
 */
export const ProblemMiddlewareLive = Layer.unwrap(
  Effect.map(ErrorsUrl, (errorsUrl) => {
    const middleware = (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) => answeringProblems(httpEffect, errorsUrl)
    return Layer.mergeAll(Layer.succeed(Problems, middleware), Layer.succeed(PublicProblems, middleware), Layer.succeed(GatewayAdminProblems, middleware))
  })
)

/**
 * The same answers around a whole router (`serveApi`): what fails before any endpoint runs, an
 * unknown route above all, is answered as problem+json too.
 */
export const answerProblems = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(ErrorsUrl, (errorsUrl: string) => answeringProblems(app, errorsUrl))
