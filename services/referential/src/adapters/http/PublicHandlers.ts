import { HttpApiBuilder } from "effect/http-api"
import { HttpServerResponse } from "effect/http"
import { Application, Caller, ReferentialStats } from "@portfolio/domain"
import { ApplicationRepository } from "../../ports/ApplicationRepository.js"
import { FunctionRepository } from "../../ports/FunctionRepository.js"
import { type Scope, Scopes } from "../../ports/TenantRevisions.js"
import { wholeOrJsonPage, wholeOrPage } from "@portfolio/platform/http"
import { Effect, Layer, Option, Stream } from "effect"
import {
  getApplication,
  listApplicationChanges,
  listApplicationChangesPage,
  listApplicationsPage
} from "../../usecases/ApplicationQueries.js"
import {
  getFunction,
  getApplicationCounts,
  getFunctionCounts,
  listFunctionsByApplication,
  listFunctionsByApplicationPage,
  listFunctionsFlatPage,
  searchFunctions,
  searchFunctionsPage,
  searchPageOf,
  walkFunctions,
  walkLocated
} from "../../usecases/FunctionQueries.js"
import { cachedBody, cachedBytes, cachedJson, cachedPart, currentBytes, EncodedReadCache, MayBeSmall } from "./EncodedReadCache.js"
import { ReadFreshness } from "../../usecases/ReadFreshness.js"
import { ApplicationCounts, FunctionCounts, referentialStats } from "../../domain/ReferentialCounts.js"
import { wholeApplicationList } from "./ApplicationList.js"
import { linkedJsons } from "./PosiLinks.js"
import { applicationJsons, arrayPieces, changeJsons, changesJson, flatJsonOfWalk, functionJsons, holeCodes, ListPieceBytes, packedByCode, posiPieces, PosiPieceBytes, posiTemplate, posiTemplateBytes, treeJson, unpackedByCode } from "./WireJson.js"
import { ReferentialPublicApi } from "./ReferentialPublicApi.js"

/** The same filters always make the same key, whatever the order of the query's parameters. */
const filterKey = (filters: Readonly<Record<string, string | undefined>>) =>
  Object.keys(filters).sort().flatMap((name) => (filters[name] === undefined ? [] : [`${name}=${encodeURIComponent(filters[name])}`])).join("&")

/**
 * What each cached form is read from (ports/TenantRevisions.ts): its entry is rebuilt after a
 * write of one of these, and only then. An application's view holds nothing of functions; the
 * tree and the flat list hold of applications only the codes of links, which only writes of
 * functions and links change; posi shows the name, parent and criticality of each linked
 * application, and the statistics count both.
 */
const ApplicationsOnly: ReadonlyArray<Scope> = ["applications"]
const FunctionsOnly: ReadonlyArray<Scope> = ["functions"]
const Both = Scopes

/** The tenant is the caller's, as the gateway asserted it; nothing in the request can change it. */
const tenant = Effect.map(Caller, (caller) => caller.tenantId)

const ApplicationsLive = HttpApiBuilder.group(ReferentialPublicApi, "applications", (handlers) =>
  handlers
    // The whole list (the v1 answer, megabytes for a large portfolio) is cached and compressed per
    // filter set, as the forests are, and made again after a write from the JSON of each
    // application kept from the last (ApplicationList.ts); pages are read as asked, and written as
    // the whole list writes its applications (applicationJsons), not through the schemas. Cached
    // answers are built with the service's repository only: a memoised build must not hold on to a
    // request.
    .handle("listApplications", ({ query: { cursor, limit, ...filters } }) =>
      Effect.flatMap(Effect.all([tenant, ApplicationRepository, EncodedReadCache]), ([tenantId, storage, cache]) =>
        wholeOrJsonPage(
          { cursor, limit },
          () =>
            cachedBody(
              `applications?${filterKey(filters)}`,
              ApplicationsOnly,
              tenantId,
              () => wholeApplicationList(tenantId, filters).pipe(Effect.provideService(ApplicationRepository, storage), Effect.provideService(EncodedReadCache, cache))
            ),
          () => Effect.map(listApplicationsPage(tenantId, filters, { cursor, limit }), (page) => ({ items: applicationJsons(page.items), next: page.next }))
        )))
    .handle("getApplication", ({ params }) =>
      Effect.flatMap(Effect.zip(tenant, ApplicationRepository), ([tenantId, storage]) =>
        cachedJson(`application:${params.code}`, ApplicationsOnly, tenantId, Application, () => Effect.provideService(getApplication(tenantId, params.code), ApplicationRepository, storage))))
    // Written without the schema (WireJson.ts), as the lists are: a read of one page of a long log.
    .handle("listApplicationChanges", ({ params, query }) =>
      Effect.flatMap(tenant, (tenantId) =>
        wholeOrJsonPage(
          query,
          () =>
            Effect.map(listApplicationChanges(tenantId, params.code, query.limit), (entries) =>
              HttpServerResponse.text(changesJson(entries), { contentType: "application/json" })),
          () => Effect.map(listApplicationChangesPage(tenantId, params.code, query), (page) => ({ items: changeJsons(page.items), next: page.next }))
        ))))

const FunctionsLive = HttpApiBuilder.group(ReferentialPublicApi, "functions", (handlers) =>
  Effect.gen(function*() {
    // The service's own storage, not a request's context, is what a cached form is built with.
    const storage = yield* Effect.context<FunctionRepository | ApplicationRepository | EncodedReadCache | ReadFreshness>()
    const walk = (tenantId: string) => Stream.provideContext(walkFunctions(tenantId), storage)
    /**
     * A whole-forest form, written as the forest is walked (ports/FunctionRepository.ts, `walk`),
     * held as a small body when it is one (most tenants'), else compressed as it comes.
     */
    const walked = (form: string, json: (tenantId: string) => Stream.Stream<Uint8Array>) =>
      Effect.flatMap(tenant, (tenantId) => cachedBody(form, FunctionsOnly, tenantId, () => Effect.succeed(new MayBeSmall(json(tenantId)))))
    return handlers
      .handle("getFunctionTree", () => walked("tree", (tenantId) => treeJson(walk(tenantId))))
      .handle("listFunctionsFlat", ({ query }) =>
        wholeOrPage(
          query,
          () => walked("flat", (tenantId) => flatJsonOfWalk(Stream.provideContext(walkLocated(tenantId), storage))),
          () => Effect.flatMap(tenant, (tenantId) => listFunctionsFlatPage(tenantId, query))
        ))
      // Posi from its two halves: the template is kept apart, made again only after a write of
      // functions; after a write of an application, the applications' objects are made again for
      // those written since the last filling (PosiLinks.ts) and the holes filled (WireJson.ts,
      // posiTemplate), a piece at a time, each answered as it is made.
      .handle("getFunctionTreePosi", () =>
        Effect.flatMap(tenant, (tenantId) =>
          cachedBody("posi", Both, tenantId, () =>
            Effect.map(
              Effect.provide(cachedBytes("posi:template", FunctionsOnly, tenantId, () => posiTemplate(walk(tenantId))), storage),
              (template) => posiPieces(template, Stream.provideContext(linkedJsons(tenantId, holeCodes(template, PosiPieceBytes), posiTemplateBytes(template)), storage))
            ))))
      // A search's whole result is kept per text, packed with each function's JSON and code
      // (`packedByCode`), and only writes of functions move what it reads: the whole answer is
      // made from it (cached and compressed as the forests are), and so are the pages once it is
      // kept, cut from it (`searchPageOf`) instead of a statement per page and its rows decoded
      // (20 to 26 ms at 50x). A first page while it is not kept is read as asked, as a typed
      // search's first page is (a search of thousands of matches costs more); a page after it,
      // with a cursor, reads and keeps the whole: the list is being walked.
      .handle("searchFunctions", ({ query: { q, ...page } }) => {
        const form = `search?q=${encodeURIComponent(q)}`
        const part = `${form}:by-code`
        const whole = (tenantId: string) =>
          Effect.provide(cachedBytes(part, FunctionsOnly, tenantId, () => Effect.provide(Effect.map(searchFunctions(tenantId, q), packedByCode), storage)), storage).pipe(
            Effect.map(unpackedByCode)
          )
        return wholeOrJsonPage(
          page,
          () =>
            Effect.flatMap(tenant, (tenantId) =>
              cachedBody(form, FunctionsOnly, tenantId, () => Effect.map(whole(tenantId), ({ count, item }) => arrayPieces(Array.from({ length: count }, (_, i) => item(i)), ListPieceBytes)))),
          () =>
            Effect.flatMap(tenant, (tenantId) =>
              Effect.flatMap(
                Effect.provide(currentBytes(part, FunctionsOnly, tenantId), storage),
                Option.match({
                  onSome: (packed) => searchPageOf(tenantId, q, page, Effect.succeed(unpackedByCode(packed))),
                  onNone: () =>
                    page.cursor === undefined
                      ? Effect.map(searchFunctionsPage(tenantId, q, page), (found) => ({ items: functionJsons(found.items), next: found.next }))
                      : searchPageOf(tenantId, q, page, whole(tenantId))
                })
              ))
        )
      })
      // The answer is cached as the other forms are; when a write moves either scope it is made
      // again from its two halves, each kept by its own scope: counting the functions of a large
      // referential (its depth, its unlinked functions) is most of the cost, and a write of an
      // application does not redo it.
      .handle("getFunctionStats", () =>
        Effect.flatMap(tenant, (tenantId) =>
          cachedJson("stats", Both, tenantId, ReferentialStats, () =>
            Effect.provide(
              Effect.zipWith(
                cachedPart("stats:functions", FunctionsOnly, tenantId, FunctionCounts, () => Effect.provide(getFunctionCounts(tenantId), storage)),
                cachedPart("stats:applications", ApplicationsOnly, tenantId, ApplicationCounts, () => Effect.provide(getApplicationCounts(tenantId), storage)),
                referentialStats
              ),
              storage
            ))))
      .handle("listFunctionsByApplication", ({ params, query }) =>
        Effect.flatMap(tenant, (tenantId) =>
          wholeOrPage(
            query,
            () => listFunctionsByApplication(tenantId, params.code),
            () => listFunctionsByApplicationPage(tenantId, params.code, query)
          )))
      .handle("getFunction", ({ params }) => Effect.flatMap(tenant, (tenantId) => getFunction(tenantId, params.id)))
  }))

/** The handlers of the referential's public API: its two groups. */
export const PublicHandlersLive = Layer.mergeAll(ApplicationsLive, FunctionsLive)
