import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { GatewayAdminApi, ProvisioningAdminApi, PublicApi, ReferentialAdminApi, ScimApiPrefix, Upstream } from "@portfolio/domain"
import { Context, Option } from "effect"
import { expect } from "vitest"
import type { Reply } from "./http.js"
import { catalogue } from "./problem.js"
import { errorsUrl } from "./system.js"

/**
 * Helpers of the limits suite (bad-input-limits.test.ts): every endpoint of every contract with
 * where it is answered, requests with exact bytes and headers, and the 415 the catalogue gained.
 */

export type ServiceName = "gateway" | "referential" | "provisioning"

export interface EndpointUnderTest {
  readonly name: string
  readonly method: string
  /** The declared path, parameters as `:name`. */
  readonly path: string
  readonly params: ReadonlyArray<string>
  /** Whether it takes a JSON body. */
  readonly takesJson: boolean
  /** A public endpoint is answered by `service` behind the gateway; an admin one on `service`'s admin port. */
  readonly port: "public" | "admin"
  readonly service: ServiceName
}

const endpointsOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  port: "public" | "admin",
  adminOf?: ServiceName
): Array<EndpointUnderTest> => {
  const found: Array<EndpointUnderTest> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      const upstream = Option.getOrUndefined(Context.getOption(mergedAnnotations, Upstream))
      found.push({
        name: `${group.identifier}.${endpoint.identifier}`,
        method: endpoint.method,
        path: endpoint.path,
        params: Array.from(endpoint.path.matchAll(/:(\w+)/g), (match) => match[1]!),
        takesJson: endpoint.method !== "GET" && Array.from(endpoint.payload.values()).some(({ encoding }) => encoding._tag === "Json"),
        port,
        service: adminOf ?? upstream ?? "gateway"
      })
    }
  })
  return found
}

export const everyEndpoint: ReadonlyArray<EndpointUnderTest> = [
  ...endpointsOf(PublicApi, "public"),
  ...endpointsOf(GatewayAdminApi, "admin", "gateway"),
  ...endpointsOf(ReferentialAdminApi, "admin", "referential"),
  ...endpointsOf(ProvisioningAdminApi, "admin", "provisioning")
]

/** The path of `endpoint` with each parameter replaced, raw (already encoded). */
export const fillPath = (endpoint: EndpointUnderTest, valueOf: (param: string) => string) =>
  endpoint.path.replace(/:(\w+)/g, (_, name: string) => valueOf(name))

export interface ExactRequest {
  readonly method: string
  readonly headers?: Record<string, string>
  /** Sent as these bytes: no Content-Type is added. */
  readonly body?: string | Buffer
}

/** A request whose body goes out with exactly the headers given (fetch adds a Content-Type only to a string body). */
export const sendExact = async (url: string, request: ExactRequest): Promise<Reply> => {
  const body = typeof request.body === "string" ? Buffer.from(request.body) : request.body
  const response = await fetch(url, { method: request.method, headers: request.headers ?? {}, ...(body === undefined ? {} : { body }) })
  const text = await response.text()
  const contentType = response.headers.get("content-type") ?? ""
  return { status: response.status, headers: response.headers, contentType, text, body: /json/.test(contentType) && text.length > 0 ? JSON.parse(text) : undefined }
}

/** The catalogue of test/support/problem.ts with the code this suite is about. */
export const limitsCatalogue = {
  ...catalogue,
  UNSUPPORTED_MEDIA_TYPE: { status: 415, slug: "unsupported-media-type", title: "Unsupported media type" }
} as const
export type LimitsCode = keyof typeof limitsCatalogue

const describeReply = (reply: Reply) => `${reply.status} ${reply.text.slice(0, 300)}`

/** Whether a path is SCIM's, whose errors are SCIM errors (docs/scim.md, "Errors"), not RFC 9457 problems. */
export const isScimPath = (path: string) => path.startsWith(`${ScimApiPrefix}/`)

/** A SCIM error (RFC 7644 3.12) with the status of the decided code. */
const expectScimCode = (reply: Reply, errorCode: LimitsCode) => {
  const { status } = limitsCatalogue[errorCode]
  expect({ status: reply.status, contentType: reply.contentType }, describeReply(reply)).toEqual({
    status,
    contentType: expect.stringMatching(/^application\/scim\+json(;|$)/)
  })
  expect(reply.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: String(status), detail: expect.stringMatching(/\S/) })
  expect(reply.body.errorCode).toBeUndefined()
}

/**
 * An RFC 9457 body with the decided code, for the request path `instance`; with `scim`, the SCIM
 * error of the same status that SCIM's paths answer instead.
 */
export const expectCode = (reply: Reply, errorCode: LimitsCode, instance: string, scim = false) => {
  if (scim) return expectScimCode(reply, errorCode)
  const row = limitsCatalogue[errorCode]
  expect({ status: reply.status, contentType: reply.contentType }, describeReply(reply)).toEqual({
    status: row.status,
    contentType: expect.stringMatching(/^application\/problem\+json(;|$)/)
  })
  expect(reply.body).toEqual({ type: `${errorsUrl}/${row.slug}`, title: row.title, status: row.status, detail: expect.stringMatching(/\S/), instance, errorCode })
}

/**
 * Any 4xx problem that an endpoint gave, not the router: "No such endpoint." is the router's
 * answer for a path it does not route, which a parameter the schema accepts must never get.
 */
export const expectEndpointProblem = (reply: Reply, instance: string) => {
  expect(reply.status >= 400 && reply.status < 500, describeReply(reply)).toBe(true)
  expect(reply.body?.detail, describeReply(reply)).not.toBe("No such endpoint.")
  if (isScimPath(instance)) {
    const code = Object.keys(limitsCatalogue).find((candidate) => limitsCatalogue[candidate as LimitsCode].status === reply.status)
    expect(code, describeReply(reply)).toBeDefined()
    return expectScimCode(reply, code as LimitsCode)
  }
  const code = Object.keys(limitsCatalogue).find((candidate) => candidate === reply.body?.errorCode)
  expect(code, describeReply(reply)).toBeDefined()
  expectCode(reply, code as LimitsCode, instance)
}
