import { InputText, NotFound, PublicPageSize } from "@portfolio/domain"
import { cursorCodec, keysetPage, mapPage } from "@portfolio/platform/http"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import { FunctionRepository } from "../ports/FunctionRepository.js"
import { TenantRevisions } from "../ports/TenantRevisions.js"
import { Effect, Option, Schema, Stream } from "effect"
import { compareCodes, comparePaths, locating, toBusinessFunction } from "../domain/FunctionForest.js"
import type { PlacedFunction } from "../domain/FunctionRecord.js"
import { referentialStats } from "../domain/ReferentialCounts.js"
import { applicationNotFound, type PageRequest } from "./ApplicationQueries.js"

export const functionNotFound = (id: string) => new NotFound({ detail: `No business function with id '${id}'.` })

/** The tenant's revision of each scope: equal values mean nothing of that scope changed in between. */
export const referentialRevisions = Effect.fn("referentialRevisions")(function*(tenantId: string) {
  const revisions = yield* TenantRevisions
  return yield* revisions.current(tenantId)
})

/** The tenant's forest in tree order, in batches (ports/FunctionRepository.ts, `walk`). */
export const walkFunctions = (tenantId: string): Stream.Stream<ReadonlyArray<PlacedFunction>, never, FunctionRepository> =>
  Stream.unwrap(Effect.gen(function*() {
    return (yield* FunctionRepository).walk(tenantId)
  }))

/** The walk with each function's path: the flat list's functions, in its order. */
export const walkLocated = (tenantId: string) =>
  Stream.suspend(() => {
    const locate = locating()
    return Stream.map(walkFunctions(tenantId), (batch) => batch.map(locate))
  })

/** The flat list is in tree order, which its paths sort in: a page resumes after the last path. */
const FlatCursor = cursorCodec("functions-flat", Schema.Array(InputText).pipe(Schema.check(Schema.isMinLength(1))))

/**
 * A page of the flat list. Tree order is no column an index holds: the page is cut from the walk
 * of the forest the whole list is made from (one statement), after the cursor's path, so that
 * functions written between two pages shift nothing either; the walk stops once the page is full.
 */
export const listFunctionsFlatPage = Effect.fn("listFunctionsFlatPage")(function*(tenantId: string, query: PageRequest) {
  const page = yield* keysetPage({
    codec: FlatCursor,
    scope: { tenantId },
    query,
    size: PublicPageSize,
    read: (after, limit) =>
      Stream.flatMap(walkLocated(tenantId), Stream.fromIterable).pipe(
        Stream.filter((fn) => Option.match(after, { onNone: () => true, onSome: (path) => comparePaths(fn.path, path) > 0 })),
        Stream.take(limit),
        Stream.runCollect
      ),
    keyOf: (last) => last.path
  })
  return mapPage(page, toBusinessFunction)
})

export const getFunction = Effect.fn("getFunction")(function*(tenantId: string, id: string) {
  const functions = yield* FunctionRepository
  const found = yield* functions.find(tenantId, id)
  if (Option.isNone(found)) return yield* functionNotFound(id)
  return toBusinessFunction(found.value)
})

export const searchFunctions = Effect.fn("searchFunctions")(function*(tenantId: string, text: string) {
  const functions = yield* FunctionRepository
  return (yield* functions.search(tenantId, text)).map(toBusinessFunction)
})

/** Lists of functions sorted by code (codes are unique in a tenant): a page resumes after the last code. */
const SearchCursor = cursorCodec("functions-search", InputText)
const ByApplicationCursor = cursorCodec("functions-by-application", InputText)

/**
 * A page of `searchFunctions` read as asked: its statement cuts the page. The searched text is
 * part of the list.
 */
export const searchFunctionsPage = Effect.fn("searchFunctionsPage")(function*(tenantId: string, text: string, query: PageRequest) {
  const functions = yield* FunctionRepository
  const page = yield* keysetPage({
    codec: SearchCursor,
    scope: { tenantId, q: text },
    query,
    size: PublicPageSize,
    read: (after, limit) => functions.search(tenantId, text, { after, limit }),
    keyOf: (last) => last.code
  })
  return mapPage(page, toBusinessFunction)
})

/**
 * The same page cut from the whole result, once read and kept (`whole`: how many, each one's code
 * in code order, and its item), read only once the cursor is known to be this list's: a list walked page
 * after page costs one search, not a statement per page.
 */
export const searchPageOf = <A, E, R>(
  tenantId: string,
  text: string,
  query: PageRequest,
  whole: Effect.Effect<{ readonly count: number; readonly codeAt: (i: number) => string; readonly item: (i: number) => A }, E, R>
) =>
  Effect.map(
    keysetPage({
      codec: SearchCursor,
      scope: { tenantId, q: text },
      query,
      size: PublicPageSize,
      read: (after, limit) => Effect.map(whole, ({ codeAt, count, item }) => indexesAfter(count, codeAt, Option.getOrUndefined(after), limit).map((i) => ({ code: codeAt(i), item: item(i) }))),
      keyOf: (last) => last.code
    }),
    (page) => mapPage(page, (found) => found.item)
  )

/**
 * The indexes of the `limit` codes after `after` (all from the first without it) among the
 * `count` codes `codeAt` gives, sorted by compareCodes.
 */
const indexesAfter = (count: number, codeAt: (i: number) => string, after: string | undefined, limit: number): ReadonlyArray<number> => {
  let low = 0
  let high = count
  while (after !== undefined && low < high) {
    const middle = (low + high) >>> 1
    if (compareCodes(codeAt(middle), after) <= 0) low = middle + 1
    else high = middle
  }
  return Array.from({ length: Math.max(0, Math.min(limit, count - low)) }, (_, i) => low + i)
}

export const listFunctionsByApplication = Effect.fn("listFunctionsByApplication")(function*(tenantId: string, code: string) {
  const applications = yield* ApplicationRepository
  const functions = yield* FunctionRepository
  if (!(yield* applications.exists(tenantId, code))) return yield* applicationNotFound(code)
  return (yield* functions.listByApplication(tenantId, code)).map(toBusinessFunction)
})

/** A page of `listFunctionsByApplication`; a cursor of another application's list is refused. */
export const listFunctionsByApplicationPage = Effect.fn("listFunctionsByApplicationPage")(
  function*(tenantId: string, code: string, query: PageRequest) {
    const applications = yield* ApplicationRepository
    const functions = yield* FunctionRepository
    const page = yield* keysetPage({
      codec: ByApplicationCursor,
      scope: { tenantId, code },
      query,
      size: PublicPageSize,
      read: (after, limit) =>
        Effect.gen(function*() {
          if (!(yield* applications.exists(tenantId, code))) return yield* applicationNotFound(code)
          return yield* functions.listByApplication(tenantId, code, { after, limit })
        }),
      keyOf: (last) => last.code
    })
    return mapPage(page, toBusinessFunction)
  }
)

export const getFunctionCounts = Effect.fn("getFunctionCounts")(function*(tenantId: string) {
  const functions = yield* FunctionRepository
  return yield* functions.counts(tenantId)
})

export const getApplicationCounts = Effect.fn("getApplicationCounts")(function*(tenantId: string) {
  const applications = yield* ApplicationRepository
  return yield* applications.counts(tenantId)
})

export const getReferentialStats = Effect.fn("getReferentialStats")(function*(tenantId: string) {
  return referentialStats(yield* getFunctionCounts(tenantId), yield* getApplicationCounts(tenantId))
})
