import { HttpApi } from "effect/http-api"
import { FindMyWay } from "effect/http"
import { describe, expect, it } from "@effect/vitest"
import { GatewayAdminApi, ProvisioningAdminApi, PublicApi, ReferentialAdminApi } from "@portfolio/domain"
import { SchemaAST } from "effect"
import http from "node:http"
import { MaxHeaderBytes } from "../../src/http/NodeServer.js"
import { jsonBodyEndpoints, MaxPathParamLength, RouterConfig } from "../../src/http/RequestGuards.js"

interface PathParameter {
  readonly endpoint: string
  readonly method: string
  readonly path: string
  readonly name: string
  /** The schema's `maxLength`, `undefined` when it sets none. */
  readonly maxLength: number | undefined
}

/** The `maxLength` bounds of a list of checks, groups included. */
const maxLengthsOf = (checks: ReadonlyArray<SchemaAST.Check<unknown>>): Array<number> =>
  checks.flatMap((check) => {
    if (check._tag === "FilterGroup") return maxLengthsOf(check.checks)
    const representation = (check.annotations as { readonly representation?: { readonly id: string; readonly payload: { readonly maxLength?: number } } } | undefined)?.representation
    return representation?.id === "effect/schema/isMaxLength" && representation.payload.maxLength !== undefined ? [representation.payload.maxLength] : []
  })

/** The tightest `maxLength` among the checks of a parameter's schema, on either side of its encoding. */
const maxLengthOf = (ast: SchemaAST.AST): number | undefined => {
  const bounds = [...maxLengthsOf(ast.checks ?? []), ...maxLengthsOf(SchemaAST.toEncoded(ast).checks ?? [])]
  return bounds.length === 0 ? undefined : Math.min(...bounds)
}

const apis = { PublicApi, GatewayAdminApi, ReferentialAdminApi, ProvisioningAdminApi } as Record<string, HttpApi.Constraint>

const pathParameters: ReadonlyArray<PathParameter> = Object.values(apis).flatMap((api) => {
  const found: Array<PathParameter> = []
  HttpApi.reflect(api as HttpApi.Top, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      if (endpoint.params === undefined) return
      const ast = endpoint.params.ast
      if (ast._tag !== "Objects") throw new Error(`${endpoint.identifier}: path schema is a ${ast._tag}, not a struct`)
      for (const property of ast.propertySignatures) {
        found.push({
          endpoint: `${group.identifier}.${endpoint.identifier}`,
          method: endpoint.method,
          path: endpoint.path,
          name: String(property.name),
          maxLength: maxLengthOf(property.type)
        })
      }
    }
  })
  return found
})

/**
 * The longest value a parameter may take: its `maxLength` in characters of the longest
 * percent-encoding (3 bytes each), or, unbounded, as long as a request head may be.
 */
const longest = (parameter: PathParameter) =>
  parameter.maxLength === undefined ? "a".repeat(http.maxHeaderSize) : encodeURIComponent("\u20ac".repeat(parameter.maxLength))

const routerOf = (config: Partial<FindMyWay.RouterConfig>) => {
  const router = FindMyWay.make<string>(config)
  const routes = new Map(pathParameters.map((parameter) => [`${parameter.method} ${parameter.path}`, parameter]))
  for (const parameter of routes.values()) router.on(parameter.method, parameter.path as FindMyWay.PathInput, parameter.endpoint)
  return router
}

const pathWith = (parameter: PathParameter) =>
  parameter.path.replace(/:(\w+)/g, (_, name: string) => (name === parameter.name ? longest(parameter) : "p"))

describe("path parameters of every contract", () => {
  it("are found, with the bounds their schemas set", () => {
    expect(pathParameters).toContainEqual(expect.objectContaining({ endpoint: "invitations.removeMember", name: "userSub", maxLength: 255 }))
    expect(pathParameters).toContainEqual(expect.objectContaining({ endpoint: "invitations.revokeInvitation", name: "id", maxLength: undefined }))
    expect(pathParameters.length).toBeGreaterThan(10)
  })

  it("fit the routers' limit, which no request line can outgrow", () => {
    expect(http.maxHeaderSize).toBeLessThanOrEqual(MaxPathParamLength)
    expect(MaxHeaderBytes).toBeLessThanOrEqual(MaxPathParamLength)
    for (const parameter of pathParameters) {
      expect({ ...parameter, fits: (parameter.maxLength ?? 0) <= MaxPathParamLength }).toMatchObject({ fits: true })
    }
  })

  it("are routed at their longest, each to its own endpoint", () => {
    const router = routerOf(RouterConfig)
    for (const parameter of pathParameters) {
      expect({ parameter: `${parameter.endpoint} ${parameter.name}`, routed: router.find(parameter.method, pathWith(parameter))?.handler })
        .toEqual({ parameter: `${parameter.endpoint} ${parameter.name}`, routed: parameter.endpoint })
    }
  })

  it("were not with find-my-way's default limit: a member with a long userSub could not be removed", () => {
    const removeMember = pathParameters.find((parameter) => parameter.name === "userSub")!
    expect(routerOf({}).find("DELETE", pathWith(removeMember))).toBeUndefined()
  })

  it("reach the body guard's matching too, so that a long parameter does not skip the checks", () => {
    const putApplication = pathParameters.find((parameter) => parameter.endpoint === "referentialAdmin.putApplication" && parameter.name === "code")!
    expect(jsonBodyEndpoints(ReferentialAdminApi)("PUT", pathWith(putApplication))).toBe(putApplication.path)
    expect(jsonBodyEndpoints(ReferentialAdminApi)("DELETE", pathWith(putApplication))).toBeUndefined()
  })
})
