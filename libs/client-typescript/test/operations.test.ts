import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { routes } from "../src/generated/openapi.js"
import { ApiPromise, operations, PagePromise } from "../src/index.js"
import { fakeFetch, instantClient, json } from "./support.js"

/**
 * Read from the committed contract, not from the SDK: an operation added to openapi.json without a
 * method in the SDK fails here.
 */
const document = JSON.parse(readFileSync(new URL("../../domain/openapi.json", import.meta.url), "utf8"))
const httpMethods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

interface SpecOperation {
  operationId: string
  method: string
  path: string
  pathParams: Array<string>
  requiredQuery: Array<string>
  bodyProperties: Array<string> | null
  paginated: boolean
}

const specOperations: Array<SpecOperation> = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  httpMethods
    // SCIM's operations (`x-sdk: false`) are for identity tools, not the SDK.
    .filter((method) => item[method] !== undefined && item[method]["x-sdk"] !== false)
    .map((method) => {
      const operation = item[method]
      const parameters: Array<any> = operation.parameters ?? []
      const bodySchema = operation.requestBody?.content?.["application/json"]?.schema
      const resolved = bodySchema?.$ref ? document.components.schemas[bodySchema.$ref.split("/").pop()] : bodySchema
      return {
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!),
        requiredQuery: parameters.filter((parameter) => parameter.in === "query" && parameter.required).map((parameter) => parameter.name),
        bodyProperties: resolved === undefined ? null : resolved.required,
        paginated: operation.responses?.["200"]?.headers?.Link !== undefined
      }
    })
)

describe("operations", () => {
  it("reads the fifteen operations of openapi.json", () => {
    expect(specOperations.length).toBeGreaterThanOrEqual(15)
  })

  it("maps exactly the operationIds of openapi.json", () => {
    expect(Object.keys(operations).sort()).toEqual(specOperations.map((operation) => operation.operationId).sort())
  })

  it("routes exactly the operations of openapi.json, with their method and path", () => {
    expect(Object.fromEntries(specOperations.map((operation) => [operation.operationId, { method: operation.method, path: operation.path }]))).toEqual(routes)
  })

  for (const spec of specOperations) {
    it(`${spec.operationId} is callable as client.${(operations as Record<string, { resource: string; method: string }>)[spec.operationId]?.resource}.${(operations as Record<string, { resource: string; method: string }>)[spec.operationId]?.method}, with the contract's method, path, query and body`, async () => {
      const entry = (operations as Record<string, { resource: string; method: string } | undefined>)[spec.operationId]
      expect(entry, `${spec.operationId} is missing from operations`).toBeDefined()
      const { fetch, requests } = fakeFetch(json([]))
      const client = instantClient(fetch) as unknown as Record<string, Record<string, (...args: Array<unknown>) => unknown>>
      const resource = client[entry!.resource]
      expect(resource?.[entry!.method], `client.${entry!.resource}.${entry!.method}`).toBeTypeOf("function")

      const pathValues = spec.pathParams.map((name) => `${name} 1/x`)
      const queryValues = spec.requiredQuery.map((name) => `${name} value`)
      const body = spec.bodyProperties === null ? null : Object.fromEntries(spec.bodyProperties.map((name) => [name, `${name}@value`]))
      const args: Array<unknown> = [...pathValues, ...queryValues, ...(body === null ? [] : [body])]
      if (spec.paginated) args.push({ limit: 2 })

      const promise = resource![entry!.method]!.apply(resource, args)
      expect(promise).toBeInstanceOf(spec.paginated ? PagePromise : ApiPromise)
      await promise

      expect(requests).toHaveLength(1)
      const request = requests[0]!
      const expectedPath = spec.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(`${name} 1/x`))
      expect(request.method).toBe(spec.method)
      expect(request.url.pathname).toBe(`/api/v1${expectedPath}`)
      for (const name of spec.requiredQuery) expect(request.url.searchParams.get(name)).toBe(`${name} value`)
      if (spec.paginated) expect(request.url.searchParams.get("limit")).toBe("2")
      expect(request.body).toEqual(body)
    })
  }
})
