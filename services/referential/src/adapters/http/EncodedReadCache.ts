import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Cause, Context, Effect, Fiber, Layer, Option, Schema, Stream } from "effect"
import { once } from "node:events"
import { LRUCache } from "lru-cache"
import { ReferentialSettings } from "../../Config.js"
import { revisionOf, type Scope } from "../../ports/TenantRevisions.js"
import { ReadFreshness } from "../../usecases/ReadFreshness.js"
import { ProgressiveBody } from "./ProgressiveBody.js"
import { compress, type ContentCoding, compressor, preferredCoding } from "@portfolio/platform/http"
import { makeReleaseCollector } from "@portfolio/platform/runtime"

/** An entry unread for this long is dropped. */
export const IdleEntryMs = 60_000

/** When dropped answers are given back to the system (libs/platform's makeReleaseCollector). */
const ReleaseCollection = { thresholdBytes: 8 * 1024 * 1024, minIntervalMs: 2_000 }

/** Below this an answer goes as it is: one packet either way, and compressing costs more than it saves. */
const CompressFrom = 1_400

interface Entry {
  /** The revision of the form's scopes its body was read at (ports/TenantRevisions.ts, `revisionOf`). */
  readonly revision: number
  /** Memoised: concurrent requests after a write share one build instead of each making theirs. */
  readonly body: Effect.Effect<Uint8Array, unknown>
  /** The compressed forms, each made once for the entry, on the first request that asks for it. */
  readonly coded: Partial<Record<ContentCoding, Effect.Effect<Uint8Array>>>
  /**
   * While the body is made a piece at a time: its pieces so far and its compressed forms', which
   * the answers of that time follow. Dropped once the body is made.
   */
  making: Making | undefined
}

interface Making {
  readonly identity: ProgressiveBody
  readonly coded: Partial<Record<ContentCoding, ProgressiveBody>>
}

export interface EncodedReadCacheShape {
  readonly get: (key: string) => Entry | undefined
  readonly set: (key: string, entry: Entry) => void
  /**
   * Counts `bytes` more for `entry` against the budget (its body once built, then each compressed
   * form once made),
   * dropping the coldest entries beyond it (an entry larger than the whole budget is not kept).
   */
  readonly grew: (key: string, entry: Entry, bytes: number) => void
  /** Drops `entry` if it is still the one cached under `key`. */
  readonly evict: (key: string, entry: Entry) => void
}

interface Slot {
  readonly entry: Entry
  /** What the entry's built forms weigh so far (0 until its body is built; the cache counts it as 1). */
  readonly bytes: number
}

/**
 * The encoded JSON answers of the reads that cost the most to make (whole forests, the
 * application list, single applications, the statistics), with their compressed forms, each kept
 * while the tenant's revisions of the scopes its form depends on stay the same. Decoding,
 * assembling and encoding costs far more than knowing the revisions, which ReadFreshness keeps
 * without a round trip per request, and every write moves the revisions of what it changed in its
 * own transaction, so an entry is never served once a write is known to have replaced it, and a
 * write of one scope leaves the forms of the other alone (docs/architecture.md#the-read-path).
 */
export class EncodedReadCache extends Context.Service<
  EncodedReadCache,
  EncodedReadCacheShape
>()("@portfolio/referential/EncodedReadCache") {
  /**
   * Keeps at most `budgetBytes` of encoded bodies and their compressed forms, dropping the least
   * recently used first, and any entry unread for `IdleEntryMs`: a tenant nobody reads does not
   * keep its answers in memory, and its next read asks PostgreSQL for its revisions anyway
   * (ReadFreshness forgets it after as long). `clock` is for tests.
   */
  static readonly fixed = (budgetBytes: number, clock?: { readonly now: () => number }) =>
    Layer.sync(EncodedReadCache, () => {
      const released = makeReleaseCollector(ReleaseCollection)
      const slots = new LRUCache<string, Slot>({
        maxSize: budgetBytes,
        ttl: IdleEntryMs,
        updateAgeOnGet: true,
        ttlAutopurge: true,
        // An entry dropped, unread for a minute or pushed out by others: its bodies are freed only
        // by a full collection, which an idle referential would otherwise never run. A slot replaced
        // by `set` is either the same entry grown or a newer one, made by a busy reader.
        dispose: (slot, _key, reason) => {
          if (reason !== "set") released(slot.bytes)
        },
        // A test's clock is read at every check: the cache otherwise reuses a reading for 1 ms.
        ...(clock === undefined ? {} : { perf: clock, ttlResolution: 0 })
      })
      return {
        get: (key) => slots.get(key)?.entry,
        set: (key, entry) => void slots.set(key, { entry, bytes: 0 }, { size: 1 }),
        grew: (key, entry, bytes) => {
          const slot = slots.peek(key)
          if (slot === undefined || slot.entry !== entry) return
          const total = slot.bytes + Math.max(1, bytes)
          // A new slot: `set` of the very same value keeps its old size.
          slots.set(key, { entry, bytes: total }, { size: total })
        },
        evict: (key, entry) => {
          if (slots.peek(key)?.entry === entry) slots.delete(key)
        }
      }
    })

  /** The budget of `REFERENTIAL_READ_CACHE_MB`. */
  static readonly layer = Layer.unwrap(Effect.map(ReferentialSettings, (settings) => EncodedReadCache.fixed(settings.readCacheBytes)))
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * Starts `work` in a fiber of its own, with nothing of the request that asked for it (no context,
 * no interruption), and answers its outcome to everyone who asks: a client that goes away while a
 * body is built must not leave the failure of its interruption cached for the others, and a cached
 * entry must not hold on to the request (its socket, its caller) for as long as it lives.
 */
const detached = <A, E>(work: Effect.Effect<A, E>): Effect.Effect<Effect.Effect<A, E>> =>
  // Started once the caller yields, so that the entry it belongs to is in place first.
  Effect.sync(() => Fiber.join(Effect.runFork(Effect.andThen(Effect.yieldNow, work))))

/** A turn of the event loop: the pieces made so far go out before the next is made. */
const nextTurn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/**
 * What a build makes: the whole body, or its pieces in order, made as they are taken (an answer of
 * megabytes then starts before it is all made), or read as they come.
 */
type Made<E> = Uint8Array | Iterable<Uint8Array> | Stream.Stream<Uint8Array, E>

/** The entry of `form`, built anew when a scope it reads has moved; its body is not waited for. */
const currentEntry = <E>(form: string, scopes: ReadonlyArray<Scope>, tenantId: string, build: () => Effect.Effect<Made<E>, E>) =>
  Effect.gen(function*() {
    const cache = yield* EncodedReadCache
    // UUIDs compare without case in PostgreSQL: one tenant, one key, whatever the spelling.
    const tenant = tenantId.toLowerCase()
    const key = `${tenant}:${form}`
    const revision = revisionOf(yield* (yield* ReadFreshness).revisions(tenant), scopes)
    let entry = cache.get(key)
    if (entry === undefined || entry.revision < revision) {
      const identity = new ProgressiveBody()
      const making: Making = { identity, coded: {} }
      const body: Effect.Effect<Uint8Array, E> = yield* detached(Effect.gen(function*() {
        const made = yield* build()
        if (made instanceof Uint8Array) identity.push(made)
        else if (Stream.isStream(made)) yield* Stream.runForEach(made, (piece) => Effect.andThen(Effect.sync(() => identity.push(piece)), nextTurn))
        else {
          for (const piece of made) {
            identity.push(piece)
            yield* nextTurn
          }
        }
        const whole = identity.end()
        created.making = undefined
        cache.grew(key, created, whole.byteLength)
        return whole
      }).pipe(Effect.tapCause((cause) =>
        Effect.sync(() => {
          identity.fail(Cause.squash(cause))
          created.making = undefined
          cache.evict(key, created)
        })
      )))
      const created: Entry = { revision, body, coded: {}, making }
      entry = created
      cache.set(key, entry)
    }
    return { cached: entry, key }
  })

/** The whole body of an entry of a build failing with `E` (a failed build has evicted its entry already). */
const wholeBody = <E>(entry: Entry) => entry.body as Effect.Effect<Uint8Array, E>

/** The entry of `form` and its whole body. */
const cachedEntry = <E>(form: string, scopes: ReadonlyArray<Scope>, tenantId: string, build: () => Effect.Effect<Made<E>, E>) =>
  Effect.flatMap(currentEntry(form, scopes, tenantId, build), ({ cached }) => wholeBody<E>(cached))

/**
 * `source`'s pieces compressed into `target` as they come, the first flushed at once so that it
 * leaves without waiting for the compressor's window to fill.
 */
const compressFollowing = (coding: ContentCoding, source: ProgressiveBody, target: ProgressiveBody): Effect.Effect<Uint8Array> =>
  Effect.promise(async () => {
    const zip = compressor(coding)
    zip.on("data", (piece: Buffer) => target.push(piece))
    const finished = new Promise<void>((resolve, reject) => {
      zip.once("end", resolve)
      zip.once("error", reject)
    })
    try {
      let first = true
      for await (const piece of source.follow()) {
        if (!zip.write(piece)) await once(zip, "drain")
        if (first) {
          first = false
          zip.flush()
        }
      }
      zip.end()
      await finished
      return target.end()
    } catch (error) {
      target.fail(error)
      zip.destroy()
      throw error
    }
  })

const followed = (body: ProgressiveBody) => Stream.fromAsyncIterable(body.follow(), (error) => error)

/**
 * Answers the JSON `build` makes (UTF-8), from the cache when the tenant's revisions of `scopes`
 * (everything `build` reads) have not moved, compressed when the request accepts it (gzip or br)
 * and the answer is worth it. A failed build (an unknown application's 404) is answered as it
 * failed and not kept. `build` comes with its
 * services provided: it runs detached from the request. It is made only on a miss: a traced
 * use case (`Effect.fn`) captures a stack trace each time it is called, which a hit must not pay
 * (measured: 7% of the referential's CPU on the single-application read). The revision is known
 * before the data is read, so an entry never carries a revision newer than its content. A form
 * that leaves out a scope it reads is served stale after that scope's writes: `scopes` must
 * name every table the read touches (ports/TenantRevisions.ts says what each covers).
 */
export const cachedBody = <E>(form: string, scopes: ReadonlyArray<Scope>, tenantId: string, build: () => Effect.Effect<Made<E>, E>) =>
  Effect.gen(function*() {
    // Every answer of a form says it may differ by coding: a shared cache must not hand a small
    // identity answer to a client that asked for br once the form has grown.
    const headers = { vary: "accept-encoding" }
    const accepted = Effect.serviceOption(HttpServerRequest.HttpServerRequest).pipe(
      Effect.map((request) => preferredCoding(Option.getOrUndefined(Option.flatMap(request, (r) => Option.fromNullishOr(r.headers["accept-encoding"])))))
    )
    const { cached, key } = yield* currentEntry(form, scopes, tenantId, build)
    const cache = yield* EncodedReadCache
    const making = cached.making
    if (making !== undefined) yield* Effect.promise(() => making.identity.started())
    // Still being made once its first piece is there: the answer follows the making, compressed
    // as it comes when the request accepts a coding (only large answers are made in pieces).
    if (making !== undefined && !making.identity.settled) {
      const coding = yield* accepted
      if (coding === "identity") return HttpServerResponse.stream(followed(making.identity), { contentType: "application/json", headers })
      let coded = making.coded[coding]
      if (coded === undefined) {
        const target = new ProgressiveBody()
        making.coded[coding] = coded = target
        cached.coded[coding] = yield* detached(compressFollowing(coding, making.identity, target).pipe(
          Effect.tap((bytes) => Effect.sync(() => cache.grew(key, cached, bytes.byteLength)))
        ))
      }
      return HttpServerResponse.stream(followed(coded), { contentType: "application/json", headers: { ...headers, "content-encoding": coding } })
    }
    const body = yield* wholeBody<E>(cached)
    const coding = body.byteLength >= CompressFrom ? yield* accepted : "identity"
    if (coding === "identity") return HttpServerResponse.uint8Array(body, { contentType: "application/json", headers })
    let coded = cached.coded[coding]
    if (coded === undefined) {
      coded = yield* detached(compress(coding, body).pipe(Effect.tap((bytes) => Effect.sync(() => cache.grew(key, cached, bytes.byteLength)))))
      cached.coded[coding] = coded
    }
    return HttpServerResponse.uint8Array(yield* coded, { contentType: "application/json", headers: { ...headers, "content-encoding": coding } })
  })

/** `read`'s value in the JSON of `schema` (its JSON codec, as the API encodes answers), as UTF-8. */
const jsonOf = <A, I, E>(schema: Schema.Codec<A, I>, read: () => Effect.Effect<A, E>) => () =>
  read().pipe(
    Effect.flatMap((value) => Effect.orDie(Schema.encodeEffect(Schema.toCodecJson(schema))(value))),
    Effect.map((encoded) => encoder.encode(JSON.stringify(encoded)))
  )

/** `cachedBody` of `read`'s value in the JSON of `schema`. */
export const cachedJson = <A, I, E>(
  form: string,
  scopes: ReadonlyArray<Scope>,
  tenantId: string,
  schema: Schema.Codec<A, I>,
  read: () => Effect.Effect<A, E>
) => cachedBody(form, scopes, tenantId, jsonOf(schema, read))

/** The bytes `build` makes, kept as answers are kept: a part of an answer that reads fewer scopes than the answer does. */
export const cachedBytes = <E>(form: string, scopes: ReadonlyArray<Scope>, tenantId: string, build: () => Effect.Effect<Uint8Array, E>) =>
  cachedEntry(form, scopes, tenantId, build)

/**
 * `read`'s value, kept as its JSON in `schema` as answers are kept: for a part of an answer that
 * reads fewer scopes than the answer does (the statistics' counting of functions, which a write
 * of an application leaves as it was).
 */
export const cachedPart = <A, I, E>(
  form: string,
  scopes: ReadonlyArray<Scope>,
  tenantId: string,
  schema: Schema.Codec<A, I>,
  read: () => Effect.Effect<A, E>
) =>
  cachedEntry(form, scopes, tenantId, jsonOf(schema, read)).pipe(
    Effect.flatMap((body) => Effect.orDie(Schema.decodeEffect(Schema.fromJsonString(Schema.toCodecJson(schema)))(decoder.decode(body))))
  )
