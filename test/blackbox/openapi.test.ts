import { Validator } from "@seriousme/openapi-schema-validator"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { request } from "undici"
import { beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()

/** The 15 public operations of the contract (README, docs/product-rules.md) with the scope each requires, written out here so that the suite checks the contract against them. */
const publicOperations = [
  ["get", "/referentiel/applications", "read"],
  ["get", "/referentiel/applications/{code}", "read"],
  ["get", "/referentiel/applications/{code}/changes", "read"],
  ["get", "/referentiel/functions", "read"],
  ["get", "/referentiel/functions/flat", "read"],
  ["get", "/referentiel/functions/posi", "read"],
  ["get", "/referentiel/functions/{id}", "read"],
  ["get", "/referentiel/functions/search", "read"],
  ["get", "/referentiel/functions/by-application/{code}", "read"],
  ["get", "/referentiel/functions/stats", "read"],
  ["post", "/tenant/invitations", "write"],
  ["get", "/tenant/invitations", "read"],
  ["get", "/tenant/invitations/members", "read"],
  ["delete", "/tenant/invitations/{id}", "write"],
  ["delete", "/tenant/invitations/members/{userSub}", "write"]
] as const

/**
 * SCIM 2.0's operations (docs/scim.md), for identity tools: a SCIM token of their own, SCIM errors,
 * no scope and no SDK method.
 */
const scimOperations = [
  ["get", "/scim/v2/Users"],
  ["post", "/scim/v2/Users"],
  ["get", "/scim/v2/Users/{id}"],
  ["put", "/scim/v2/Users/{id}"],
  ["patch", "/scim/v2/Users/{id}"],
  ["delete", "/scim/v2/Users/{id}"],
  ["get", "/scim/v2/ServiceProviderConfig"],
  ["get", "/scim/v2/ResourceTypes"],
  ["get", "/scim/v2/ResourceTypes/{id}"],
  ["get", "/scim/v2/Schemas"],
  ["get", "/scim/v2/Schemas/{id}"]
] as const

const methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

let document: any

beforeAll(async () => {
  const reply = await send(`${system.baseUrl}/openapi.json`)
  expect({ status: reply.status, contentType: reply.contentType }).toEqual({ status: 200, contentType: expect.stringMatching(/^application\/json/) })
  document = reply.body
})

/** Operations keyed `method path`, paths relative to the base URL whether or not the document repeats /api/v1. */
const operations = () => {
  const result = new Map<string, any>()
  for (const [path, item] of Object.entries<any>(document.paths ?? {})) {
    for (const method of methods) {
      if (item[method] !== undefined) result.set(`${method} ${path.replace(/^\/api\/v1(?=\/)/, "")}`, item[method])
    }
  }
  return result
}

describe("OpenAPI document", () => {
  it("validates as OpenAPI 3.1 with a real validator", async () => {
    const validator = new Validator()
    const result = await validator.validate(document)
    expect(result.errors ?? []).toEqual([])
    expect({ valid: result.valid, version: validator.version, openapi: document.openapi }).toEqual({
      valid: true,
      version: "3.1",
      openapi: expect.stringMatching(/^3\.1\./)
    })
  })

  it("lists exactly the 15 public operations and SCIM's 11", () => {
    expect([...operations().keys()].sort()).toEqual([...publicOperations, ...scimOperations].map(([method, path]) => `${method} ${path}`).sort())
  })

  it.each(scimOperations)("documents SCIM's %s %s with the SCIM token alone, SCIM errors, and out of the SDKs", (method, path) => {
    const operation = operations().get(`${method} ${path}`)
    expect(operation.security).toEqual([{ scimToken: [] }])
    expect(document.components.securitySchemes.scimToken).toMatchObject({ type: "http", scheme: "bearer" })
    expect(operation["x-sdk"]).toBe(false)
    expect(operation.tags).toEqual(["SCIM 2.0"])
    for (const status of ["401", "403", "429"]) {
      expect(Object.keys(operation.responses[status].content)).toEqual(["application/scim+json"])
    }
    const success = Object.entries<any>(operation.responses).find(([status]) => status.startsWith("2"))![1]
    if (success.content !== undefined) expect(Object.keys(success.content)).toEqual(["application/scim+json"])
    if (operation.requestBody !== undefined) expect(Object.keys(operation.requestBody.content)).toEqual(["application/scim+json"])
  })

  it.each(publicOperations)("documents %s %s with its scope tag, security, 401, 429 and a code sample", (method, path, scope) => {
    const operation = operations().get(`${method} ${path}`)
    expect(operation, `${method} ${path}`).toBeDefined()
    const scopeTags = (operation.tags ?? []).filter((tag: string) => tag.startsWith("scope:"))
    expect(scopeTags).toEqual([`scope:${scope}`])

    const security = operation.security ?? document.security ?? []
    expect(security.length).toBeGreaterThan(0)
    // A PAT as a bearer token, or a partner's token from the client-credentials flow.
    for (const requirement of security) {
      for (const name of Object.keys(requirement)) {
        const scheme = document.components?.securitySchemes?.[name]
        if (scheme?.type === "oauth2") {
          expect(scheme.flows.clientCredentials.tokenUrl, `security scheme ${name}`).toBe(`${document.servers[0].url}/oauth/token`)
        } else {
          expect(scheme, `security scheme ${name}`).toMatchObject({ type: "http", scheme: expect.stringMatching(/^bearer$/i) })
        }
      }
    }

    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["401", "429"]))
    const samples = operation["x-codeSamples"] ?? operation["x-code-samples"] ?? []
    expect(samples.length, "code samples").toBeGreaterThan(0)
    for (const sample of samples) expect(sample).toMatchObject({ lang: expect.any(String), source: expect.stringMatching(/\S/) })
    const pathPrefix = path.split("{")[0]!
    expect(samples.some((sample: any) => sample.source.includes(pathPrefix)), `a sample calling ${path}`).toBe(true)
  })

  it("has servers and paths that together address /api/v1 exactly once", () => {
    const server: string = document.servers?.[0]?.url ?? "/"
    const listPath = Object.keys(document.paths).find((path) => path.endsWith("/referentiel/applications"))!
    expect(new URL(`${server.replace(/\/$/, "")}${listPath}`, "http://localhost").pathname).toBe("/api/v1/referentiel/applications")
  })
})

describe("interactive reference", () => {
  it("answers HTML at {base_url}/docs", async () => {
    const reply = await send(`${system.baseUrl}/docs`)
    expect(reply.status).toBe(200)
    expect(reply.contentType).toMatch(/^text\/html/)
    expect(reply.text).toMatch(/<html/i)
  })

  it("serves the reference's script from this origin, in br, gzip or as it is, the same bytes each way", async () => {
    const page = await send(`${system.baseUrl}/docs`)
    const src = /<script src="([^"]+)"><\/script>/.exec(page.text)?.[1]
    expect(src).toBe("/api/v1/docs/api-reference.js")
    const fetchRaw = async (acceptEncoding: string | undefined) => {
      const answer = await request(`${new URL(system.baseUrl).origin}${src}`, { headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } })
      const body = Buffer.from(await answer.body.arrayBuffer())
      return { status: answer.statusCode, encoding: answer.headers["content-encoding"], vary: answer.headers["vary"], type: answer.headers["content-type"], body }
    }
    const [plain, br, gz] = [await fetchRaw(undefined), await fetchRaw("gzip, deflate, br"), await fetchRaw("gzip")]
    expect([plain.status, br.status, gz.status]).toEqual([200, 200, 200])
    expect([plain.encoding, br.encoding, gz.encoding]).toEqual([undefined, "br", "gzip"])
    expect(plain.type).toBe("text/javascript; charset=utf-8")
    expect(br.vary).toBe("accept-encoding")
    expect(plain.body.toString("utf8")).toContain("@scalar/api-reference")
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true)
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true)
    expect(br.body.length * 3).toBeLessThan(plain.body.length)
  })
})
