import { CliError } from "effect/cli"
import { HttpClientError, type HttpClientRequest, type HttpClientResponse } from "effect/http"
import { isApiError, Problem, ProblemCatalog } from "@portfolio/domain"
import { effect3KeyWords, ErrorsUrl } from "@portfolio/platform/http"
import { Cause, Config, Effect, Option, Schema, SchemaIssue } from "effect"
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

export const ExitCode = { success: 0, failure: 1, usage: 2 } as const

const decodeProblem = Schema.decodeUnknownEffect(Problem)

const fromCatalog = (errorsUrl: string, errorCode: keyof typeof ProblemCatalog, detail: string): CliProblem => {
  const row = ProblemCatalog[errorCode]
  return { type: `${errorsUrl.replace(/\/+$/, "")}/${row.slug}`, title: row.title, status: row.status, detail, errorCode }
}

/** An answer the admin API contract does not declare (a 500, say): its body is still a problem. */
const fromUndeclaredResponse = (errorsUrl: string, request: HttpClientRequest.HttpClientRequest, response: HttpClientResponse.HttpClientResponse) =>
  response.json.pipe(
    Effect.flatMap(decodeProblem),
    Effect.map((problem): CliProblem => ({ ...problem })),
    Effect.orElseSucceed(() =>
      fromCatalog(errorsUrl, "INTERNAL", `Unexpected answer ${response.status} from ${request.method} ${request.url}.`)
    )
  )

const formatIssue = (issue: SchemaIssue.Issue) => new Schema.SchemaError(issue).message

/**
 * Effect 3's words for an absent and an unknown field, which operators and scripts read, the API's
 * (libs/platform's `effect3KeyWords`); Effect 4's for the rest.
 */
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook: effect3KeyWords })

/** A schema's refusal, one line per fault, each after the path of its field: `["regulation"] is unexpected`. */
export const describeSchemaError = (error: Schema.SchemaError): string =>
  formatIssues(error.issue).issues
    .map(({ message, path }) => {
      const keys = (path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment)
      return keys.length === 0 ? message : `${keys.map((key) => `[${JSON.stringify(String(key))}]`).join("")} ${message}`
    })
    .join("\n")

/**
 * One sentence per variable at fault, once each (the env and local.env sources repeat them). A
 * variable that is absent "is not set"; a refusal of our own (`Config.mapEffect`) is its message.
 */
const describeConfigError = (error: Config.ConfigError): string => {
  if (!Schema.isSchemaError(error.cause)) return error.cause.message
  const sentences: Array<string> = []
  const walk = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): void => {
    const at = (what: string) => sentences.push(path.length > 0 ? `${path.map(String).join(".")} ${what}` : what)
    switch (issue._tag) {
      case "Pointer":
        return walk(issue.issue, [...path, ...issue.path])
      case "Encoding":
        return walk(issue.issue, path)
      case "Composite":
      case "AnyOf":
        return issue.issues.forEach((inner) => walk(inner, path))
      case "MissingKey":
        return void at("is not set")
      case "InvalidType":
        return void at(issue.input === undefined ? "is not set" : formatIssue(issue))
      default:
        return void at(formatIssue(issue))
    }
  }
  walk(error.cause.issue, [])
  return [...new Set(sentences)].join("; ")
}

/** `fetch failed` says nothing; the system error underneath (ECONNREFUSED...) does. */
const transportReason = (error: HttpClientError.RequestError): string => {
  const cause = error.cause as { readonly message?: unknown; readonly cause?: { readonly code?: unknown; readonly message?: unknown } } | undefined
  // Without a cause nor a description, the kind of failure: Transport, Encode or InvalidUrl.
  const reason = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? error.description ?? error._tag.replace(/Error$/, "")
  return String(reason)
}

const fromFailure = (errorsUrl: string, error: unknown): Effect.Effect<CliProblem> => {
  if (isApiError(error)) return Effect.succeed(fromCatalog(errorsUrl, error.errorCode, error.detail))
  if (HttpClientError.isHttpClientError(error)) {
    const reason = error.reason
    if ("response" in reason) return fromUndeclaredResponse(errorsUrl, reason.request, reason.response)
    const origin = URL.canParse(reason.request.url) ? new URL(reason.request.url).origin : reason.request.url
    return Effect.succeed(
      fromCatalog(errorsUrl, "UNAVAILABLE", `Cannot reach ${origin} (${transportReason(reason)}). Is the system running (npm start)?`)
    )
  }
  if (Schema.isSchemaError(error)) {
    return Effect.succeed(fromCatalog(errorsUrl, "INVALID_REQUEST", describeSchemaError(error)))
  }
  if (error instanceof Config.ConfigError) {
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
 * were already explained by the argument parser; help shown because no command was named (the
 * parser's `ShowHelp` without errors) is no failure.
 */
export const reportFailure = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const failure = Cause.findErrorOption(cause)
    if (Option.isSome(failure) && CliError.isCliError(failure.value)) {
      return failure.value._tag === "ShowHelp" && failure.value.errors.length === 0 ? ExitCode.success : ExitCode.usage
    }
    const errorsUrl = yield* ErrorsUrl
    const error = Option.isSome(failure) ? failure.value : Cause.squash(cause)
    const problem = yield* fromFailure(errorsUrl, error)
    yield* writeJsonError(problem)
    return ExitCode.failure
  })
