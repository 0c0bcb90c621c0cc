import { type HttpApi, type HttpApiClient, type HttpApiGroup } from "effect/http-api"
import { HttpClient } from "effect/http"
import { InternalSecret, operatorApiClient, type SecurityLogPage } from "@portfolio/platform/security"
import { Effect, Option } from "effect"
import { UpstreamUnavailable } from "../../ports/DirectoryDesk.js"
import { Refused } from "../../ports/TokenDesk.js"

/**
 * Typed clients of an admin API whose requests are signed as the console acting for a member
 * (the assertion's subject, `console:<e-mail>`, is what the service records): the console holds
 * the services' internal secret, as an operator's CLI does (docs/security.md#the-console). Their
 * path parameters are percent-encoded (`operatorApiClient`): an id is one segment whatever it holds.
 */
const memberClients = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  baseUrl: string
) =>
  Effect.gen(function*() {
    const secret = yield* InternalSecret
    const http = yield* HttpClient.HttpClient
    const client = operatorApiClient(api)
    return (memberEmail: string) =>
      client({ baseUrl, secret, operator: `console:${memberEmail}` }).pipe(Effect.provideService(HttpClient.HttpClient, http))
  })

/** The query of a service's security log: a page without a start sends no `since` at all. */
export const securityLogQuery = ({ limit, since }: SecurityLogPage) => ({ limit, ...(since === undefined ? {} : { since }) })

const problemOf = (error: unknown): { readonly status: number; readonly detail: string } | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const detail = (error as { readonly detail?: unknown }).detail
  const status = (error.constructor as { readonly status?: unknown }).status
  return typeof detail === "string" && typeof status === "number" ? { status, detail } : undefined
}

const outage = (error: unknown) => new UpstreamUnavailable({ reason: error instanceof Error ? error.message : String(error) })

/**
 * A call its client could not even make is refused as any other failure of the call, never sent:
 * Effect's typed client throws on a path parameter that is no path segment (`.`, `..`, and ""
 * refused by `operatorApiClient`), and a request its schema refuses cannot be built.
 */
const unmade = <A, E, R>(call: Effect.Effect<A, E, R>) => Effect.catchDefect(call, (defect) => Effect.fail(defect))

/**
 * The service's answer, or why not: a problem it answered with a 4xx is the member's to read
 * (`Refused`); anything else (unreachable, a 5xx, an answer that does not decode) is an outage.
 */
const asMemberOutcome = <A, R>(call: Effect.Effect<A, unknown, R>) =>
  Effect.mapError(unmade(call), (error) => {
    const problem = problemOf(error)
    return problem !== undefined && problem.status >= 400 && problem.status < 500 ? new Refused(problem) : outage(error)
  })

/** Calls whose 4xx answers are not expected (the console builds them): any failure is an outage. */
const asOutage = <A, R>(call: Effect.Effect<A, unknown, R>) => Effect.mapError(unmade(call), outage)

/**
 * The calls of a desk to one group of an admin API (`group`, as the contract names it), each made
 * with a client signed for the member it names (`who`, their e-mail, or what provisioning records
 * when nobody is known yet) and its failures mapped once: `outage` for the calls whose 4xx answers
 * are not expected, `outcome` for those whose 4xx is the member's to read (`Refused`).
 */
export const memberDesk = <Id extends string, Groups extends HttpApiGroup.Constraint, const Group extends keyof HttpApiClient.Client<Groups>>(
  api: HttpApi.HttpApi<Id, Groups>,
  baseUrl: string,
  group: Group
) =>
  Effect.map(memberClients(api, baseUrl), (clients) => {
    type Call<A, E, R> = (client: HttpApiClient.Client<Groups>[Group]) => Effect.Effect<A, E, R>
    const calling = <A, E, R>(who: string, call: Call<A, E, R>) => Effect.flatMap(clients(who), (client) => call(client[group]))
    return {
      outage: <A, E, R>(who: string, call: Call<A, E, R>) => asOutage(calling(who, call)),
      outcome: <A, E, R>(who: string, call: Call<A, E, R>) => asMemberOutcome(calling(who, call))
    }
  })

/** A call whose 404 means that there is no such thing: its answer if any, none on a 404. */
export const orNone = <A, E, R>(call: Effect.Effect<A, E | { readonly _tag: "NotFound" }, R>) =>
  call.pipe(Effect.map(Option.some), Effect.catchTag("NotFound", () => Effect.succeed(Option.none<A>())))
