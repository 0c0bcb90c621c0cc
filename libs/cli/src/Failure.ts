import { HttpClientError } from "@effect/platform"
import { ValidationError } from "@effect/cli"
import { isApiError, Problem, ProblemCatalog } from "@portfolio/domain"
import { ErrorsUrl } from "@portfolio/platform/http/ProblemResponse"
import { Cause, ConfigError, Effect, Option, ParseResult, Schema } from "effect"
import { writeJsonError } from "./Terminal.js"

/** What the CLI writes on stderr when a command fails: an RFC 9457 problem with its `errorCode`. */
export interface CliProblem {
  readonly type: string
  readonly title: string
  readonly status?: number
  readonly detail: string
  readonly instance?: string
  readonly errorCode: string
}

export const ExitCode = { failure: 1, usage: 2 } as const

const decodeProblem = Schema.decodeUnknown(Problem)

const fromCatalog = (errorsUrl: string, errorCode: keyof typeof ProblemCatalog, detail: string): CliProblem => {
  const row = ProblemCatalog[errorCode]
  return { type: `${errorsUrl.replace(/\/+$/, "")}/${row.slug}`, title: row.title, status: row.status, detail, errorCode }
}

/** An answer the admin API contract does not declare (a 500, say): its body is still a problem. */
const fromUndeclaredResponse = (errorsUrl: string, error: HttpClientError.ResponseError) =>
  error.response.json.pipe(
    Effect.flatMap(decodeProblem),
    Effect.map((problem): CliProblem => ({ ...problem })),
    Effect.orElseSucceed(() =>
      fromCatalog(errorsUrl, "INTERNAL", `Unexpected answer ${error.response.status} from ${error.request.method} ${error.request.url}.`)
    )
  )

/** One sentence per variable at fault, once each (the env and local.env sources repeat them). */
const describeConfigError = (error: ConfigError.ConfigError): string => {
  const leaf = (path: Array<string>, what: string) => [path.length > 0 ? `${path.join(".")} ${what}` : what]
  const sentences = ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, left: Array<string>, right: Array<string>) => [...left, ...right],
    orCase: (_, left, right) => [...left, ...right],
    invalidDataCase: (_, path, message) => leaf(path, message),
    missingDataCase: (_, path) => leaf(path, "is not set"),
    sourceUnavailableCase: (_, path, message) => leaf(path, `cannot be read: ${message}`),
    unsupportedCase: (_, path, message) => leaf(path, message)
  })
  return [...new Set(sentences)].join("; ")
}

/** `fetch failed` says nothing; the system error underneath (ECONNREFUSED...) does. */
const transportReason = (error: HttpClientError.RequestError): string => {
  const cause = error.cause as { readonly message?: unknown; readonly cause?: { readonly code?: unknown; readonly message?: unknown } } | undefined
  const reason = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? error.description ?? error.reason
  return String(reason)
}

const fromFailure = (errorsUrl: string, error: unknown): Effect.Effect<CliProblem> => {
  if (isApiError(error)) return Effect.succeed(fromCatalog(errorsUrl, error.errorCode, error.detail))
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "ResponseError") return fromUndeclaredResponse(errorsUrl, error)
    const origin = URL.canParse(error.request.url) ? new URL(error.request.url).origin : error.request.url
    return Effect.succeed(
      fromCatalog(errorsUrl, "UNAVAILABLE", `Cannot reach ${origin} (${transportReason(error)}). Is the system running (npm start)?`)
    )
  }
  if (ParseResult.isParseError(error)) {
    return Effect.succeed(fromCatalog(errorsUrl, "INVALID_REQUEST", ParseResult.TreeFormatter.formatErrorSync(error)))
  }
  if (ConfigError.isConfigError(error)) {
    return Effect.succeed({
      type: "about:blank",
      title: "Invalid configuration",
      detail: `${describeConfigError(error)}. Set the variables in the environment, or start the system with \`npm start\`, which writes them to .data/local.env for the CLI.`,
      errorCode: "INVALID_CONFIGURATION"
    })
  }
  return Effect.succeed(fromCatalog(errorsUrl, "INTERNAL", error instanceof Error ? error.message : String(error)))
}

/**
 * Writes the failure of a command as a problem on stderr and answers the exit code. Usage errors
 * were already explained by the argument parser, with the command's help.
 */
export const reportFailure = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return ExitCode.usage
    const errorsUrl = yield* ErrorsUrl
    const error = Option.isSome(failure) ? failure.value : Cause.squash(cause)
    const problem = yield* fromFailure(errorsUrl, error)
    yield* writeJsonError(problem)
    return ExitCode.failure
  })
