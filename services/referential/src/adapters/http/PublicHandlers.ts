import { HttpApiBuilder } from "@effect/platform"
import { BusinessFunction, Caller, FunctionTreeNode, PosiTreeNode } from "@portfolio/domain"
import { FunctionRepository } from "../../ports/FunctionRepository.js"
import { AssertionAuthenticationLive } from "@portfolio/platform"
import { Effect, Layer, Schema } from "effect"
import { getApplication, listApplicationChanges, listApplications } from "../../usecases/ApplicationQueries.js"
import {
  getFunction,
  getFunctionTree,
  getFunctionTreePosi,
  getReferentialStats,
  listFunctionsByApplication,
  listFunctionsFlat,
  searchFunctions
} from "../../usecases/FunctionQueries.js"
import { cachedJson } from "./EncodedReadCache.js"
import { ReferentialPublicApi } from "./ReferentialPublicApi.js"

/** The tenant is the caller's, as the gateway asserted it; nothing in the request can change it. */
const tenant = Effect.map(Caller, (caller) => caller.tenantId)

const ApplicationsLive = HttpApiBuilder.group(ReferentialPublicApi, "applications", (handlers) =>
  handlers
    .handle("listApplications", ({ urlParams }) => Effect.flatMap(tenant, (tenantId) => listApplications(tenantId, urlParams)))
    .handle("getApplication", ({ path }) => Effect.flatMap(tenant, (tenantId) => getApplication(tenantId, path.code)))
    .handle("listApplicationChanges", ({ path, urlParams }) =>
      Effect.flatMap(tenant, (tenantId) => listApplicationChanges(tenantId, path.code, urlParams.limit))))

const TreeJson = Schema.Array(FunctionTreeNode)
const FlatJson = Schema.Array(BusinessFunction)
const PosiJson = Schema.Array(PosiTreeNode)

const FunctionsLive = HttpApiBuilder.group(ReferentialPublicApi, "functions", (handlers) =>
  Effect.gen(function*() {
    // The service's own storage, not a request's context, is what a cached forest is built with.
    const storage = yield* Effect.context<FunctionRepository>()
    const forest = <A, I>(form: string, schema: Schema.Schema<A, I>, read: (tenantId: string) => Effect.Effect<A, never, FunctionRepository>) =>
      Effect.flatMap(tenant, (tenantId) => cachedJson(form, tenantId, schema, Effect.provide(read(tenantId), storage)))
    return handlers
      .handle("getFunctionTree", () => forest("tree", TreeJson, getFunctionTree))
      .handle("listFunctionsFlat", () => forest("flat", FlatJson, listFunctionsFlat))
      .handle("getFunctionTreePosi", () => forest("posi", PosiJson, getFunctionTreePosi))
      .handle("searchFunctions", ({ urlParams }) => Effect.flatMap(tenant, (tenantId) => searchFunctions(tenantId, urlParams.q)))
      .handle("getFunctionStats", () => Effect.flatMap(tenant, getReferentialStats))
      .handle("listFunctionsByApplication", ({ path }) =>
        Effect.flatMap(tenant, (tenantId) => listFunctionsByApplication(tenantId, path.code)))
      .handle("getFunction", ({ path }) => Effect.flatMap(tenant, (tenantId) => getFunction(tenantId, path.id)))
  }))

/** The public API of the referential, authenticated by the gateway's signed assertion. */
export const PublicApiLive = HttpApiBuilder.api(ReferentialPublicApi).pipe(
  Layer.provide([ApplicationsLive, FunctionsLive]),
  Layer.provide(AssertionAuthenticationLive)
)
