import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { routeTable, spanNameOf } from "../../src/http/RouteTable.js"
import { routeSpanNames } from "../../src/http/Server.js"

class Owner extends Context.Service<Owner, string>()("test/Owner") {}

// Parameter routes declared before the literal ones they collide with: the ranking, not the order, decides.
const Api = HttpApi.make("catalogue")
  .add(
    HttpApiGroup.make("functions")
      .add(HttpApiEndpoint.get("getFunction", "/functions/:id"))
      .add(HttpApiEndpoint.get("searchFunctions", "/functions/search"))
      .add(HttpApiEndpoint.delete("deleteFunction", "/functions/:id"))
      .add(HttpApiEndpoint.get("changesOf", "/functions/:id/changes"))
      .add(HttpApiEndpoint.get("byParent", "/functions/:parent/children/:child"))
      .add(HttpApiEndpoint.get("childrenOfRoot", "/functions/root/children/:child"))
      .annotate(Owner, "referential")
  )
  .add(HttpApiGroup.make("health").add(HttpApiEndpoint.get("status", "/status")))

const table = routeTable(Api)
const op = (method: string, path: string) => table.match(method, path)?.operationId

describe("route table of an HttpApi", () => {
  it("names every endpoint by its template, parameters as {name}", () => {
    expect(table.routes.map((r) => [r.operationId, r.path, r.template, r.name])).toContainEqual([
      "functions.byParent",
      "/functions/:parent/children/:child",
      "/functions/{parent}/children/{child}",
      "GET /functions/{parent}/children/{child}"
    ])
    expect(table.routes).toHaveLength(7)
  })

  it("ranks literal segments over parameters, position by position, whatever the declaration order", () => {
    expect(op("GET", "/functions/search")).toBe("functions.searchFunctions")
    expect(op("GET", "/functions/8c1b4c1e")).toBe("functions.getFunction")
    expect(op("GET", "/functions/root/children/x")).toBe("functions.childrenOfRoot")
    expect(op("GET", "/functions/other/children/x")).toBe("functions.byParent")
    expect(op("DELETE", "/functions/search")).toBe("functions.deleteFunction")
  })

  it("matches a parameter to one non-empty segment only, and the method exactly", () => {
    for (const [method, path] of [
      ["GET", "/functions/"],
      ["GET", "/functions//changes"],
      ["GET", "/functions/x/changes/extra"],
      ["GET", "/functions"],
      ["POST", "/functions/x"],
      ["GET", "/status/"],
      ["GET", "status"]
    ] as const) {
      expect(op(method, path), `${method} ${path}`).toBeUndefined()
    }
    expect(op("GET", "/status")).toBe("health.status")
  })

  it("carries what the caller adds from each endpoint's merged annotations", () => {
    const owned = routeTable(Api, ({ annotations }) => ({ owner: Option.getOrElse(Context.getOption(annotations, Owner), () => "none") }))
    expect(owned.match("GET", "/functions/search")).toMatchObject({ operationId: "functions.searchFunctions", owner: "referential" })
    expect(owned.match("GET", "/status")?.owner).toBe("none")
  })

  it("names spans by route, and every unmatched request alike", () => {
    expect(spanNameOf("GET", table.match("GET", "/functions/42/changes"))).toBe("GET /functions/{id}/changes")
    expect(spanNameOf("PUT", table.match("PUT", "/random/probe"))).toBe("PUT unmatched")
    const spanName = routeSpanNames(Api)
    const request = (url: string) => HttpServerRequest.fromWeb(new Request(`http://service.test${url}`))
    expect(spanName(request("/functions/search?q=crm"))).toBe("GET /functions/search")
    expect(spanName(request("/functions/42?x=1"))).toBe("GET /functions/{id}")
    expect(spanName(request("/nothing/here"))).toBe("GET unmatched")
  })
})
