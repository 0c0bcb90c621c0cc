import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Cause, Context, Deferred, Effect, Exit, Fiber, Layer, Option, Pull, Schema, type Scope as EffectScope, Stream } from "effect"
import { once } from "node:events"
import { pipeline, Readable, Transform } from "node:stream"
import { promisify } from "node:util"
import { brotliDecompress, createBrotliDecompress } from "node:zlib"
import { LRUCache } from "lru-cache"
import { ReferentialSettings } from "../../Config.js"
import { revisionOf, type Scope } from "../../ports/TenantRevisions.js"
import { ReadFreshness } from "../../usecases/ReadFreshness.js"
import { ProgressiveBody } from "./ProgressiveBody.js"
import { compress, type ContentCoding, compressor, LargeBody, preferredCoding } from "@portfolio/platform/http"
import { collectCompacting, makePassedChunksCollector, makeReleaseCollector, releaseNow } from "@portfolio/platform/runtime"
import { Metrics, observe } from "@portfolio/platform/telemetry"

/** An entry unread for this long is dropped. */
export const IdleEntryMs = 60_000

/**
 * When dropped answers are given back to the system (libs/platform's makeReleaseCollector): every
 * 8 MB dropped, and once nothing more has been dropped nor anything read for 5 s and the process
 * is idle (1 MB or more dropped since the last such time), by a compacting collection, which also
 * gives back the pages V8 keeps for reuse.
 */
const ReleaseCollection = {
  thresholdBytes: 8 * 1024 * 1024,
  minIntervalMs: 2_000,
  // Idle: the event loop busy less than a fifth of those 5 s. An idle referential measured 2.1 to
  // 4.4% in 10 s windows (bench:scale's idle, a fast machine); a fifth leaves room for a slower one
  // and still keeps the compaction's pause out of busy times.
  quiet: { ms: 5_000, minBytes: 1024 * 1024, collect: collectCompacting, idleBelow: 0.2 }
}

/** Below this an answer goes as it is: one packet either way, and compressing costs more than it saves. */
const CompressFrom = 1_400

/**
 * How an entry keeps its answer. A small answer is kept as it is, its compressed forms beside it
 * as they are asked for. A large one (LargeBody or more, or made in pieces) is kept br-compressed
 * only, a twentieth of its size or less: a client that accepts br gets those bytes, any other gets
 * them decompressed as they go, and gzip once made is kept beside them. Its JSON text is never
 * whole in memory: pieces go to the compressor as they are made (docs/architecture.md, "Memory").
 */
type Held = Identity | Compressed
type Identity = { readonly _tag: "Identity"; readonly body: Uint8Array }
type Compressed = { readonly _tag: "Compressed"; readonly br: Uint8Array; readonly identityBytes: number }

interface Entry {
  /** The revision of the form's scopes its body was read at (ports/TenantRevisions.ts, `revisionOf`). */
  readonly revision: number
  /** Memoised: concurrent requests after a write share one build instead of each making theirs. */
  readonly held: Effect.Effect<Held, unknown>
  /** The compressed forms not held by `held`, each made once for the entry, on the first request that asks for it. */
  readonly coded: Partial<Record<ContentCoding, Effect.Effect<Uint8Array>>>
  /** A compressed entry's JSON, decompressed once for the clients that accept no coding, when under IdentityKeptBelow. */
  plain?: Effect.Effect<Uint8Array>
  /**
   * While a large body is made: its br form so far, and the other codings made from it, which the
   * answers of that time follow. Dropped once the body is made.
   */
  making: Making | undefined
}

interface Making {
  /** The br form as it is compressed; it fails as the making failed, and ends unused for a body held as it is. */
  readonly br: ProgressiveBody
  /** The gzip form made from `br` as that comes, once a client that accepts gzip only asks. */
  gzip: ProgressiveBody | undefined
  /** Settled once the build has said what it makes: whether there is a br form to follow (none for a body held as it is, or a failed build). */
  readonly known: Deferred.Deferred<boolean>
}

/**
 * What a read of an answer found in the cache: its entry current (`hit`), none (`miss`), or one
 * that a write has since outdated (`stale`), built anew either way.
 */
export type Lookup = "hit" | "miss" | "stale"

export interface EncodedReadCacheShape {
  readonly get: (key: string) => Entry | undefined
  /** Counts a read of an answer by what it found (the cache's metrics, docs/observability.md). */
  readonly lookedUp: (found: Lookup) => void
  readonly set: (key: string, entry: Entry) => void
  /**
   * Counts `bytes` more for `entry` against the budget (its body once built, then each compressed
   * form once made),
   * dropping the coldest entries beyond it (an entry larger than the whole budget is not kept).
   */
  readonly grew: (key: string, entry: Entry, bytes: number) => void
  /** Drops `entry` if it is still the one cached under `key`. */
  readonly evict: (key: string, entry: Entry) => void
  /** The fragments of `kind` kept for `tenant` (lower case), if any: never changed once kept. */
  readonly fragments: <K extends keyof FragmentKinds>(tenant: string, kind: K) => Fragments<FragmentKinds[K]> | undefined
  /**
   * Keeps `byCode` as the fragments of `kind` for `tenant`, replacing those kept before; made as of
   * the applications' write sequence `writeSeq` when they are all of the tenant's.
   */
  readonly keepFragments: <K extends keyof FragmentKinds>(
    tenant: string,
    kind: K,
    byCode: ReadonlyMap<string, Fragment<FragmentKinds[K]>>,
    writeSeq: number | undefined
  ) => void
}

/** One application's JSON in an answer, at the version it was made at. */
export interface Fragment<V> {
  readonly code: string
  readonly version: V
  readonly json: Uint8Array
}

/**
 * The JSON of each application of a tenant whose answer is large, by code: after a write of one
 * application, the answer is that one made again and the others copied (adapters/http/Fragments.ts).
 */
export interface Fragments<V> {
  readonly byCode: ReadonlyMap<string, Fragment<V>>
  /** What they weigh against the budget: their JSON and what each costs beside it. */
  readonly bytes: number
  /**
   * The applications' write sequence (ports/ApplicationRepository.ts) they were all made as of,
   * when they are every application of the tenant: those not written since are still current.
   */
  readonly writeSeq: number | undefined
}

/**
 * The kinds of fragments, each kept apart, with the version each is made at: the whole
 * application list's (ApplicationList.ts) at the application's revision, posi's links
 * (PosiLinks.ts) at its linked version (ports/ApplicationRepository.ts, `linkedVersion`).
 */
export interface FragmentKinds {
  readonly list: number
  readonly posi: string
}

/**
 * What a kept fragment costs beside its JSON (the map's entry, the code, the version, the fragment
 * and its view of the bytes): 218 bytes measured with 10,000 list fragments; a linked version is a
 * string where a revision is a number.
 */
const FragmentOverheadBytes: { readonly [K in keyof FragmentKinds]: number } = { list: 220, posi: 260 }

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
    Layer.effect(EncodedReadCache, Effect.gen(function*() {
      const { meter } = yield* Metrics
      const lookups = meter.createCounter("portfolio.referential.read_cache.lookups", {
        unit: "{lookup}",
        description: "Reads of a cached answer, by what they found: hit, miss, or stale (outdated by a write, built anew)."
      })
      const evictions = meter.createCounter("portfolio.referential.read_cache.evictions", {
        unit: "{entry}",
        description: "Entries the read cache dropped, by share and reason: budget (pushed out by others) or idle (unread for a minute)."
      })
      const size = meter.createObservableUpDownCounter("portfolio.referential.read_cache.size", {
        unit: "By",
        description: "What the read cache holds, by share, as it counts it against its budget."
      })
      const limit = meter.createObservableUpDownCounter("portfolio.referential.read_cache.limit", {
        unit: "By",
        description: "The read cache's budget for each share (REFERENTIAL_READ_CACHE_MB)."
      })
      const found: Record<Lookup, { readonly result: Lookup }> = { hit: { result: "hit" }, miss: { result: "miss" }, stale: { result: "stale" } }
      // Every series from the start, at 0: a rate is read from the first scrape, and a cache that
      // never evicts says so rather than saying nothing.
      for (const attributes of Object.values(found)) lookups.add(0, attributes)
      // Read or kept: the cache is in use, and a compacting collection waits until it is not.
      let lastUsedAt = Number.NEGATIVE_INFINITY
      const used = () => void (lastUsedAt = performance.now())
      const released = makeReleaseCollector({ ...ReleaseCollection, quiet: { ...ReleaseCollection.quiet, lastUsedAt: () => lastUsedAt } })
      /**
       * A share of the budget: slots of `bytes` each within `maxSize`, least recently used first,
       * none kept unread for IdleEntryMs. A slot is kept anew with its size whenever it grows:
       * `set` of the very same value keeps its old size.
       */
      const share = <V extends { readonly bytes: number }>(name: "answers" | "fragments", maxSize: number) => {
        const attributes = { share: name }
        const budget = { share: name, reason: "budget" }
        const idle = { share: name, reason: "idle" }
        evictions.add(0, budget)
        evictions.add(0, idle)
        const lru = new LRUCache<string, V>({
          maxSize,
          ttl: IdleEntryMs,
          updateAgeOnGet: true,
          ttlAutopurge: true,
          // Dropped, unread for a minute or pushed out by others: its bodies are freed only by a
          // full collection, which an idle referential would otherwise never run. A slot replaced
          // by `set` is either the same entry grown or a newer one, made by a busy reader.
          dispose: (slot, _key, reason) => {
            if (reason !== "set") released(slot.bytes)
            if (reason === "evict") evictions.add(1, budget)
            else if (reason === "expire") evictions.add(1, idle)
          },
          // A test's clock is read at every check: the cache otherwise reuses a reading for 1 ms.
          ...(clock === undefined ? {} : { perf: clock, ttlResolution: 0 })
        })
        return {
          lru,
          maxSize,
          attributes,
          /**
           * Keeps `value` under `key`, unless it is larger than the whole share: lru-cache would
           * then drop what the key held without saying so (its reason "set"); instead it is let
           * go as pushed out by the budget, and `fresh` bytes (what the share never counted) are
           * released too.
           */
          keep: (key: string, value: V, fresh: number) => {
            const size = Math.max(1, value.bytes)
            if (size <= maxSize) return void lru.set(key, value, { size })
            lru.delete(key)
            released(fresh)
            evictions.add(1, budget)
          }
        }
      }
      // A quarter of the budget for the application fragments (a 10,000-application tenant's are
      // about 6 MB), the rest for the answers.
      const fragmentsBudget = Math.max(1, Math.floor(budgetBytes / 4))
      const answers = share<Slot>("answers", Math.max(1, budgetBytes - fragmentsBudget))
      const fragments = share<Fragments<unknown>>("fragments", fragmentsBudget)
      yield* observe({
        instruments: [size, limit],
        read: Effect.sync(() => [answers, fragments].map(({ attributes, lru, maxSize }) => ({ attributes, held: lru.calculatedSize, maxSize }))),
        reuseFor: 0,
        report: (observed, shares) => {
          for (const { attributes, held, maxSize } of shares) {
            observed.observe(size, held, attributes)
            observed.observe(limit, maxSize, attributes)
          }
        }
      })
      return {
        lookedUp: (result) => lookups.add(1, found[result]),
        fragments: <K extends keyof FragmentKinds>(tenant: string, kind: K) => fragments.lru.get(`${tenant}:${kind}`) as Fragments<FragmentKinds[K]> | undefined,
        keepFragments: (tenant, kind, byCode, writeSeq) => {
          let bytes = 0
          for (const fragment of byCode.values()) bytes += fragment.json.byteLength + FragmentOverheadBytes[kind]
          // More than the whole share: not kept, and what was kept is let go.
          fragments.keep(`${tenant}:${kind}`, { byCode, bytes, writeSeq }, bytes)
        },
        get: (key) => {
          used()
          return answers.lru.get(key)?.entry
        },
        set: (key, entry) => {
          used()
          answers.lru.set(key, { entry, bytes: 0 }, { size: 1 })
        },
        grew: (key, entry, bytes) => {
          const slot = answers.lru.peek(key)
          if (slot === undefined || slot.entry !== entry) return
          answers.keep(key, { entry, bytes: slot.bytes + Math.max(1, bytes) }, Math.max(1, bytes))
        },
        evict: (key, entry) => {
          if (answers.lru.peek(key)?.entry === entry) answers.lru.delete(key)
        }
      } satisfies EncodedReadCacheShape
    }))

  /** The budget of `REFERENTIAL_READ_CACHE_MB`. */
  static readonly layer = Layer.unwrap(Effect.map(ReferentialSettings, (settings) => EncodedReadCache.fixed(settings.readCacheBytes)))
}

const brotliDecompressAsync = promisify(brotliDecompress)
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
 * What a build makes: the whole body; or its pieces in order, made in this process as they are
 * taken (the JSON of a search already read), so that an answer of megabytes starts before it is
 * all made and is never whole in memory; or read as they come (a stream of rows), always held
 * compressed, or, `MayBeSmall`, gathered like the pieces of an Iterable (the forests' walks, whose
 * answers are small for most tenants). Pieces are made for the answer and are the compressor's: it
 * gives each one's memory back once compressed (`releaseNow`), so a piece is never a view of
 * something kept.
 */
type Made<E> = Uint8Array | Iterable<Uint8Array> | Stream.Stream<Uint8Array, E> | MayBeSmall<E>

/** What a build made, once gathered (`gatheredWhenSmall`). */
type Gathered<E> = Exclude<Made<E>, MayBeSmall<E>>

/** Pieces read as they come, held as a small body when they end before LargeBody (`gatheredWhenSmall`). */
export class MayBeSmall<E> {
  constructor(readonly pieces: Stream.Stream<Uint8Array, E>) {}
}

/** What a form is: an answer, held compressed once large, or a part of other answers, always held as it is. */
type Kept = "answer" | "part"

/**
 * A compressed answer smaller than this is kept decompressed as well once a client asked for it
 * as it is, so that such clients cost nothing more than the others; a larger one is decompressed
 * at each such request, its memory costing more than the decompression (about 70 ms of a zlib
 * thread per 10 MB on a slow machine).
 */
export const IdentityKeptBelow = 4 * 1024 * 1024

/** Pieces made and not compressed yet beyond which the making waits for the compressor. */
const MaxQueuedBytes = 2 * 1024 * 1024

/**
 * `made` with the pieces of an Iterable, or of MayBeSmall's stream, taken until they reach
 * LargeBody: one that ends before is a small body, whole (held as it is, as any small body is); a
 * longer one goes on from the pieces taken. Taking an Iterable's costs no wait: they are made in
 * this process, without reading anything. A stream's rest is read within the scope, which lasts
 * as long as its compression.
 */
const gatheredWhenSmall = <E>(made: Made<E>): Effect.Effect<Gathered<E>, E, EffectScope.Scope> => {
  if (made instanceof MayBeSmall) {
    return Effect.gen(function*() {
      const pull = yield* Stream.toPull(made.pieces)
      const taken: Array<Uint8Array> = []
      let bytes = 0
      while (bytes < LargeBody) {
        const chunk = yield* Pull.catchDone(pull, () => Effect.succeed(undefined))
        if (chunk === undefined) return Buffer.concat(taken, bytes)
        for (const piece of chunk) {
          taken.push(piece)
          bytes += piece.byteLength
        }
      }
      return Stream.concat(Stream.fromIterable(taken), Stream.fromPull(Effect.succeed(pull)))
    })
  }
  if (made instanceof Uint8Array || Stream.isStream(made)) return Effect.succeed(made)
  return Effect.sync(() => {
    const iterator = made[Symbol.iterator]()
    let taken: Array<Uint8Array> = []
    let bytes = 0
    for (let next = iterator.next(); !next.done; next = iterator.next()) {
      taken.push(next.value)
      bytes += next.value.byteLength
      if (bytes >= LargeBody) {
        return {
          *[Symbol.iterator]() {
            const first = taken
            taken = []
            yield* first
            for (let rest = iterator.next(); !rest.done; rest = iterator.next()) yield rest.value
          }
        }
      }
    }
    return Buffer.concat(taken, bytes)
  })
}

/** Whether what `made` is gets held br-compressed (Held). */
const heldCompressed = (kept: Kept, made: Gathered<unknown>) => !(made instanceof Uint8Array) || (kept === "answer" && made.byteLength >= LargeBody)

/**
 * The pieces `feed` writes, compressed in `coding` into `target` as they come, the first flushed
 * at once so that it leaves without waiting for the compressor's window to fill. Each piece is let
 * go once written; the next is made while it is compressed (zlib's threads) unless the compressor
 * has fallen MaxQueuedBytes behind. `target` fails as the feeding or the compressor fails.
 */
const compressInto = <E>(
  coding: ContentCoding,
  target: ProgressiveBody,
  feed: (write: (piece: Uint8Array, used?: "release") => Effect.Effect<void>) => Effect.Effect<void, E>
): Effect.Effect<{ readonly compressed: Uint8Array; readonly identityBytes: number }, E> =>
  Effect.suspend(() => {
    let identityBytes = 0
    const zip = compressor(coding)
    zip.on("data", (piece: Buffer) => target.push(piece))
    const ended = new Promise<void>((resolve, reject) => {
      zip.once("end", resolve)
      zip.once("error", reject)
    })
    // Awaited only once the pieces are all written: a compressor that fails before must not be an
    // unhandled rejection meanwhile (its failure is answered when it is awaited).
    ended.catch(() => {})
    let first = true
    const write = (piece: Uint8Array, used?: "release") =>
      Effect.andThen(
        Effect.promise(async () => {
          identityBytes += piece.byteLength
          // zlib reads the piece on its own thread until this callback: released after, not before.
          zip.write(piece, used === "release" ? () => releaseNow(piece) : undefined)
          if (zip.writableLength > MaxQueuedBytes) await once(zip, "drain")
          if (first) {
            first = false
            // Out before the next piece is made: its readers' first byte waits for no more.
            await new Promise<void>((resolve) => zip.flush(resolve))
          }
        }),
        // The pieces compressed so far go out before the next is made.
        nextTurn
      )
    return feed(write).pipe(
      Effect.andThen(Effect.promise(() => {
        zip.end()
        return ended
      })),
      Effect.map(() => ({ compressed: target.end(), identityBytes })),
      Effect.onError((cause) => Effect.sync(() => target.fail(Cause.squash(cause)))),
      Effect.ensuring(Effect.sync(() => zip.destroy()))
    )
  })

/** What `made` is, br-compressed into `target` as its pieces are made. */
const compressMade = <E>(made: Gathered<E>, target: ProgressiveBody): Effect.Effect<Compressed, E> =>
  compressInto("br", target, (write) =>
    made instanceof Uint8Array
      ? write(made)
      : Stream.isStream(made)
      ? Stream.runForEach(made, (piece) => write(piece, "release"))
      : Effect.forEach(made, (piece) => write(piece, "release"), { discard: true })).pipe(
      Effect.map(({ compressed, identityBytes }) => ({ _tag: "Compressed" as const, br: compressed, identityBytes }))
    )

/** The entry of `form`, built anew when a scope it reads has moved; its body is not waited for. */
const currentEntry = <E>(form: string, scopes: ReadonlyArray<Scope>, tenantId: string, kept: Kept, build: () => Effect.Effect<Made<E>, E>) =>
  Effect.gen(function*() {
    const cache = yield* EncodedReadCache
    // UUIDs compare without case in PostgreSQL: one tenant, one key, whatever the spelling.
    const tenant = tenantId.toLowerCase()
    const key = keyOf(tenant, kept, form)
    const revision = revisionOf(yield* (yield* ReadFreshness).revisions(tenant), scopes)
    let entry = cache.get(key)
    if (kept === "answer") cache.lookedUp(entry === undefined ? "miss" : entry.revision < revision ? "stale" : "hit")
    if (entry === undefined || entry.revision < revision) {
      const making: Making = { br: new ProgressiveBody(), gzip: undefined, known: Deferred.makeUnsafe<boolean>() }
      const held: Effect.Effect<Held, E> = yield* detached(Effect.scoped(Effect.gen(function*() {
        const made = yield* gatheredWhenSmall(yield* build())
        const compressed = heldCompressed(kept, made)
        Deferred.doneUnsafe(making.known, Exit.succeed(compressed))
        const keeping: Held = compressed ? yield* compressMade(made, making.br) : { _tag: "Identity", body: made as Uint8Array }
        created.making = undefined
        cache.grew(key, created, keeping._tag === "Identity" ? keeping.body.byteLength : keeping.br.byteLength)
        return keeping
      }).pipe(Effect.tapCause((cause) =>
        Effect.sync(() => {
          // Whoever waits is answered the failure as it is, or, following a stream, ends in error.
          Deferred.doneUnsafe(making.known, Exit.succeed(false))
          making.br.fail(Cause.squash(cause))
          created.making = undefined
          cache.evict(key, created)
        })
      ))))
      const created: Entry = { revision, held, coded: {}, making }
      entry = created
      cache.set(key, entry)
    }
    return { cached: entry, key }
  })

/** A part's key is never an answer's: what a part's entry holds is known by its key (cachedEntry). */
const keyOf = (tenant: string, kept: Kept, form: string) => `${tenant}:${kept}:${form}`

/** What an entry of a build failing with `E` holds (a failed build has evicted its entry already). */
const heldOf = <E, H extends Held = Held>(entry: Entry) => entry.held as Effect.Effect<H, E>

/**
 * The bytes of a part. A part is made whole and held as it is (`heldCompressed`), and only parts
 * are kept under a part's key (`currentEntry`).
 */
const cachedEntry = <E>(form: string, scopes: ReadonlyArray<Scope>, tenantId: string, build: () => Effect.Effect<Uint8Array, E>) =>
  Effect.flatMap(currentEntry(form, scopes, tenantId, "part", build), ({ cached }) => Effect.map(heldOf<E, Identity>(cached), (held) => held.body))

/**
 * What the cache tells of each chunk it decompressed and passed on (to a client that accepts no
 * coding, or to the gzip compressor), its bytes: their young collection's count
 * (makePassedChunksCollector), unless a test listens. Nothing holds such a chunk once it is sent.
 */
export const DecompressedChunks = Context.Reference<(bytes: number) => void>("@portfolio/referential/DecompressedChunks", {
  defaultValue: makePassedChunksCollector
})

/**
 * `source` (br) decompressed as it comes, each chunk told to `passedOn`; an error of the source
 * ends it in error, and leaving it early stops the source.
 */
const decompressed = (source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, passedOn: (bytes: number) => void): AsyncIterable<Uint8Array> => {
  const out = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      passedOn(chunk.byteLength)
      done(null, chunk)
    }
  })
  pipeline(Readable.from(source), createBrotliDecompress(), out, () => {})
  return out
}

const streamed = (pieces: AsyncIterable<Uint8Array>) => Stream.fromAsyncIterable(pieces, (error) => error)

/**
 * Answers the JSON `build` makes (UTF-8), from the cache when the tenant's revisions of `scopes`
 * (everything `build` reads) have not moved, compressed when the request accepts it (gzip or br)
 * and the answer is worth it. A large answer is held br-compressed (Held): answered as it is to a
 * client that accepts br, decompressed as it goes to one that accepts no coding, and in gzip, made
 * once from it, to one that accepts gzip only. A failed build (an unknown application's 404) is
 * answered as it failed and not kept. `build` comes with its
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
    const encoded = (coding: ContentCoding) => ({ ...headers, "content-encoding": coding })
    const { cached, key } = yield* currentEntry(form, scopes, tenantId, "answer", build)
    const cache = yield* EncodedReadCache
    const passedOn = yield* DecompressedChunks
    /** The gzip form of a compressed entry, made once from its br as that comes. */
    const gzipOf = (br: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>, target: ProgressiveBody) =>
      detached(compressInto("gzip", target, (write) => Stream.runForEach(streamed(decompressed(br(), passedOn)), write)).pipe(
        Effect.map(({ compressed }) => compressed),
        Effect.tap((bytes) => Effect.sync(() => cache.grew(key, cached, bytes.byteLength))),
        // The br form it follows is held or being made in this process: it fails only as the making fails, which its readers are told.
        Effect.orDie
      ))
    const making = cached.making
    // Still being made once its first piece is there: the answer follows the making, in the
    // coding the request accepts.
    if (making !== undefined && (yield* Deferred.await(making.known))) {
      yield* Effect.promise(() => making.br.started())
      if (!making.br.settled) {
        const coding = yield* accepted
        if (coding === "br") return HttpServerResponse.stream(streamed(making.br.follow()), { contentType: "application/json", headers: encoded("br") })
        if (coding === "identity") return HttpServerResponse.stream(streamed(decompressed(making.br.follow(), passedOn)), { contentType: "application/json", headers })
        let gzip = making.gzip
        if (gzip === undefined) {
          const target = new ProgressiveBody()
          making.gzip = gzip = target
          cached.coded.gzip = yield* gzipOf(() => making.br.follow(), target)
        }
        return HttpServerResponse.stream(streamed(gzip.follow()), { contentType: "application/json", headers: encoded("gzip") })
      }
    }
    const held = yield* heldOf<E>(cached)
    if (held._tag === "Compressed") {
      const coding = yield* accepted
      if (coding === "br") return HttpServerResponse.uint8Array(held.br, { contentType: "application/json", headers: encoded("br") })
      if (coding === "identity") {
        if (held.identityBytes >= IdentityKeptBelow) {
          return HttpServerResponse.stream(streamed(decompressed([held.br], passedOn)), { contentType: "application/json", contentLength: held.identityBytes, headers })
        }
        let plain = cached.plain
        if (plain === undefined) {
          cached.plain = plain = yield* detached(Effect.promise(() => brotliDecompressAsync(held.br)).pipe(
            Effect.tap((bytes) => Effect.sync(() => cache.grew(key, cached, bytes.byteLength)))
          ))
        }
        return HttpServerResponse.uint8Array(yield* plain, { contentType: "application/json", headers })
      }
      let gzip = cached.coded.gzip
      if (gzip === undefined) cached.coded.gzip = gzip = yield* gzipOf(() => [held.br], new ProgressiveBody())
      return HttpServerResponse.uint8Array(yield* gzip, { contentType: "application/json", headers: encoded("gzip") })
    }
    const body = held.body
    const coding = body.byteLength >= CompressFrom ? yield* accepted : "identity"
    if (coding === "identity") return HttpServerResponse.uint8Array(body, { contentType: "application/json", headers })
    let coded = cached.coded[coding]
    if (coded === undefined) {
      coded = yield* detached(compress(coding, body).pipe(Effect.tap((bytes) => Effect.sync(() => cache.grew(key, cached, bytes.byteLength)))))
      cached.coded[coding] = coded
    }
    return HttpServerResponse.uint8Array(yield* coded, { contentType: "application/json", headers: encoded(coding) })
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
export const cachedBytes = cachedEntry

/**
 * The bytes of a part if they are kept at the current revisions of `scopes` (waited for while
 * they are made), none otherwise: nothing is built, for a reader that has a cheaper way than
 * making the whole part.
 */
export const currentBytes = (form: string, scopes: ReadonlyArray<Scope>, tenantId: string) =>
  Effect.gen(function*() {
    const cache = yield* EncodedReadCache
    const tenant = tenantId.toLowerCase()
    const revision = revisionOf(yield* (yield* ReadFreshness).revisions(tenant), scopes)
    const entry = cache.get(keyOf(tenant, "part", form))
    if (entry === undefined || entry.revision < revision) return Option.none<Uint8Array>()
    // A failed making has evicted its entry, and its reader is answered another way.
    return yield* heldOf<unknown, Identity>(entry).pipe(
      Effect.map((held) => Option.some(held.body)),
      Effect.catch(() => Effect.succeed(Option.none<Uint8Array>()))
    )
  })

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
