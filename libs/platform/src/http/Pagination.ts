import { HttpEffect, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { InvalidRequest, PageCursorMaxLength, type PageSize } from "@portfolio/domain"
import { createHash } from "node:crypto"
import { requestTarget } from "./RequestGuards.js"
import { Effect, Result, Option, Schema } from "effect"

/**
 * Keyset pagination of the public lists (docs/product-rules.md#lists). A cursor is the sort key
 * of the last item of a page, so that the next page is one indexed "after this key" query and
 * items written in between never shift a page. It is readable base64url JSON, not a secret: the
 * tenant always comes from the caller, so a cursor, even forged, only says where to resume in the
 * caller's own list.
 */

/** One page of a list, and the cursor of the page after it when more items follow. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly next: Option.Option<string>
}

/** What a repository is asked for: the items after `after` (from the start when none), at most `limit`. */
export interface KeysetRequest<K> {
  readonly after: Option.Option<K>
  readonly limit: number
}

/** The size of the page asked for: the list's default without `limit`, and never above its maximum. */
export const pageLimit = (size: PageSize, limit: number | undefined): number => Math.min(limit ?? size.default, size.max)

/**
 * A page from the rows read with `limit + 1`: the extra row, never answered, tells that more
 * follow without a count.
 */
export const pageOf = <A>(rows: ReadonlyArray<A>, limit: number, cursorOf: (last: A) => string): Page<A> => {
  if (rows.length <= limit) return { items: rows, next: Option.none() }
  const items = rows.slice(0, limit)
  return { items, next: Option.some(cursorOf(items[items.length - 1]!)) }
}

/** A page whose items are each turned into what the API answers; the cursor stays. */
export const mapPage = <A, B>(page: Page<A>, f: (item: A) => B): Page<B> => ({ items: page.items.map(f), next: page.next })

/**
 * One page of a list read by keyset, as every list reads it: the cursor decoded against `scope`
 * (a cursor of another list, tenant or filters is a 400 before anything is read), `read` asked for
 * the rows after its key, one more than the page (pageOf), and the next cursor made of the key of
 * the page's last row.
 */
export const keysetPage = <K, A, E, R>(options: {
  readonly codec: CursorCodec<K>
  readonly scope: unknown
  readonly query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
  readonly size: PageSize
  readonly read: (after: Option.Option<K>, count: number) => Effect.Effect<ReadonlyArray<A>, E, R>
  readonly keyOf: (last: A) => K
}): Effect.Effect<Page<A>, InvalidRequest | E, R> =>
  Effect.flatMap(cursorAfter(options.codec, options.scope, options.query.cursor), (after) => {
    const limit = pageLimit(options.size, options.query.limit)
    return Effect.map(options.read(after, limit + 1), (rows) =>
      pageOf(rows, limit, (last) => options.codec.encode(options.scope, options.keyOf(last))))
  })

/**
 * A time in a cursor: epoch milliseconds, as the services write times, from 1970 to the end of
 * year 9999, so that a forged value is a 400 rather than a date neither JavaScript nor
 * PostgreSQL can hold.
 */
export const CursorTime = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 253_402_300_799_999 }))

/** Bumped when the format changes, so that an old cursor is refused rather than misread. */
const CursorVersion = 1

const invalidCursor = () =>
  new InvalidRequest({
    detail: "invalid cursor: a cursor is only valid for the list and the filters whose Link header gave it; start again without it."
  })

/** JSON with object keys sorted and undefined members left out: equal filters give equal text. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).filter(([, member]) => member !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonical(member)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

export interface CursorCodec<K> {
  /** The cursor after `key`, in the list `scope` names. */
  readonly encode: (scope: unknown, key: K) => string
  /** The key of a cursor this codec wrote for the same `scope`; any other string is a 400. */
  readonly decode: (scope: unknown, cursor: string) => Result.Result<K, InvalidRequest>
}

/**
 * The cursors of one list. `scope` is what the list depends on besides the key (the tenant, the
 * filters, the parent in the path): a digest of it rides in the cursor, so that a cursor used on
 * another list, with other filters or by another tenant is refused instead of answering a page
 * of something else.
 */
export const cursorCodec = <K, I>(list: string, key: Schema.Codec<K, I>): CursorCodec<K> => {
  const digest = (scope: unknown) =>
    createHash("sha256").update(canonical([list, scope])).digest().subarray(0, 12).toString("base64url")
  const Envelope = Schema.Struct({ v: Schema.Literal(CursorVersion), l: Schema.Literal(list), s: Schema.String, k: key })
  const encodeKey = Schema.encodeSync(key)
  const decodeEnvelope = Schema.decodeUnknownResult(Envelope, { onExcessProperty: "error" })
  return {
    encode: (scope, value) =>
      Buffer.from(JSON.stringify({ v: CursorVersion, l: list, s: digest(scope), k: encodeKey(value) })).toString("base64url"),
    decode: (scope, cursor) => {
      if (cursor.length === 0 || cursor.length > PageCursorMaxLength || !/^[A-Za-z0-9_-]+$/.test(cursor)) return Result.fail(invalidCursor())
      const bytes = Buffer.from(cursor, "base64url")
      // Node decodes leniently; only the one spelling it writes is accepted back.
      if (bytes.toString("base64url") !== cursor) return Result.fail(invalidCursor())
      let parsed: unknown
      try {
        parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
      } catch {
        return Result.fail(invalidCursor())
      }
      const envelope = decodeEnvelope(parsed)
      return Result.isSuccess(envelope) && envelope.success.s === digest(scope) ? Result.succeed(envelope.success.k) : Result.fail(invalidCursor())
    }
  }
}

/** The key after which a request's page starts: none without a cursor, a 400 for one that is not this list's. */
export const cursorAfter = <K>(codec: CursorCodec<K>, scope: unknown, cursor: string | undefined): Effect.Effect<Option.Option<K>, InvalidRequest> =>
  cursor === undefined ? Effect.succeed(Option.none()) : Effect.map(Effect.fromResult(codec.decode(scope, cursor)), Option.some)

/**
 * The reference of the next page, relative to the request's own URL (RFC 3986 section 5.2):
 * its last path segment and its query, with `cursor` replaced. Relative rather than absolute
 * because only the client knows the address it called: the gateway forwards the path unchanged
 * (docs/architecture.md), and a proxy in front of it may add a host or a prefix that no process
 * behind it sees; a relative reference resolves against whatever the client called.
 */
export const nextPageReference = (requestUrl: string, cursor: string): string => {
  const queryAt = requestUrl.indexOf("?")
  const path = queryAt === -1 ? requestUrl : requestUrl.slice(0, queryAt)
  const query = queryAt === -1 ? "" : requestUrl.slice(queryAt + 1)
  const kept = query.split("&").filter((pair) => pair.length > 0 && parameterName(pair) !== "cursor")
  const segment = path.slice(path.lastIndexOf("/") + 1)
  // A first segment holding ":" would read as a scheme (RFC 3986 section 4.2).
  const base = segment.includes(":") ? `./${segment}` : segment
  return `${base}?${[...kept, `cursor=${cursor}`].map(uriSafe).join("&")}`
}

/**
 * The cursor of a `Link: <...?cursor=...>; rel="next"` header that `nextPageReference` wrote, or
 * none on the last page: what a caller of a paged list reads to ask for the next one.
 */
export const cursorOfNextLink = (link: string | undefined): Option.Option<string> => {
  const target = link === undefined ? undefined : /^<([^>]*)>;\s*rel="next"$/.exec(link)?.[1]
  return target === undefined ? Option.none() : Option.fromNullishOr(new URLSearchParams(target.slice(target.indexOf("?") + 1)).get("cursor"))
}

/**
 * Percent-encodes what RFC 3986 does not allow in a query (node accepts `<`, `>` and `"` in a
 * request line): a query copied as sent must not close the `<...>` of the Link header and add
 * links of its own. What is already encoded stays as it is.
 */
const uriSafe = (pair: string) => pair.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]/g, (c) => encodeURIComponent(c))

const parameterName = (pair: string) => {
  const name = pair.split("=", 1)[0]!.replace(/\+/g, " ")
  try {
    return decodeURIComponent(name)
  } catch {
    return name
  }
}

/**
 * The items of a page as the endpoint's answer, with `Link: <...>; rel="next"` (RFC 8288) when
 * more follow. The header is set as the response is written, where the request's URL is at hand.
 */
export const answerPage = <A>(page: Page<A>): Effect.Effect<ReadonlyArray<A>, never, HttpServerRequest.HttpServerRequest> =>
  Effect.as(linkNext(page), page.items)

/**
 * `answerPage` of items already JSON (each exactly as the endpoint's schema would write it): the
 * JSON array of them, as the endpoint would answer it, without decoding or encoding a thing.
 */
const answerJsonPage = (page: Page<Uint8Array>): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.as(linkNext(page), HttpServerResponse.uint8Array(jsonArray(page.items), { contentType: "application/json" }))

const linkNext = (page: Page<unknown>): Effect.Effect<void, never, HttpServerRequest.HttpServerRequest> =>
  Option.match(page.next, {
    onNone: () => Effect.void,
    onSome: (cursor) =>
      HttpEffect.appendPreResponseHandler((request, response) =>
        Effect.succeed(
          response.status >= 300
            ? response
            : HttpServerResponse.setHeader(response, "link", `<${nextPageReference(requestTarget(request), cursor)}>; rel="next"`)
        ))
  })

/** `[`, the elements separated by `,`, `]`: JSON.stringify's array of them. */
const jsonArray = (elements: ReadonlyArray<Uint8Array>): Uint8Array => {
  const array = Buffer.allocUnsafe(elements.reduce((total, element) => total + element.byteLength + 1, elements.length === 0 ? 2 : 1))
  let at = 0
  elements.forEach((element, i) => {
    array[at++] = i === 0 ? 0x5b : 0x2c
    array.set(element, at)
    at += element.byteLength
  })
  if (elements.length === 0) array[at++] = 0x5b
  array[at] = 0x5d
  return array
}

/**
 * A list endpoint's answer: without `limit` and `cursor`, the whole list exactly as before pages
 * existed (no Link header); otherwise the page asked for.
 */
export const wholeOrPage = <W, E, R, A, E2, R2>(
  query: { readonly limit?: number | undefined; readonly cursor?: string | undefined },
  whole: () => Effect.Effect<W, E, R>,
  page: () => Effect.Effect<Page<A>, E2, R2>
): Effect.Effect<W | ReadonlyArray<A>, E | E2, R | R2 | HttpServerRequest.HttpServerRequest> =>
  query.limit === undefined && query.cursor === undefined ? whole() : Effect.flatMap(page(), answerPage)

/** `wholeOrPage` of a page whose items are JSON already (`answerJsonPage`). */
export const wholeOrJsonPage = <W, E, R, E2, R2>(
  query: { readonly limit?: number | undefined; readonly cursor?: string | undefined },
  whole: () => Effect.Effect<W, E, R>,
  page: () => Effect.Effect<Page<Uint8Array>, E2, R2>
): Effect.Effect<W | HttpServerResponse.HttpServerResponse, E | E2, R | R2 | HttpServerRequest.HttpServerRequest> =>
  query.limit === undefined && query.cursor === undefined ? whole() : Effect.flatMap(page(), answerJsonPage)
