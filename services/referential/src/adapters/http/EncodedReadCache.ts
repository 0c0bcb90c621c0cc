import { HttpServerResponse } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { LRUCache } from "lru-cache"
import { ReferentialSettings } from "../../Config.js"
import { referentialRevision } from "../../usecases/FunctionQueries.js"

interface Entry {
  readonly revision: number
  /** Memoised: concurrent requests after a write share one build instead of each making theirs. */
  readonly body: Effect.Effect<Uint8Array>
}

export interface EncodedReadCacheShape {
  readonly get: (key: string) => Entry | undefined
  readonly set: (key: string, entry: Entry) => void
  /**
   * Counts the built body of `entry` against the budget, dropping the coldest entries beyond it
   * (a body larger than the whole budget is not kept).
   */
  readonly built: (key: string, entry: Entry, bytes: number) => void
  /** Drops `entry` if it is still the one cached under `key`. */
  readonly evict: (key: string, entry: Entry) => void
}

interface Slot {
  readonly entry: Entry
  /** Whether the slot counts its body's bytes yet: until the body is built, it counts one. */
  readonly sized: boolean
}

/**
 * The encoded JSON of a tenant's whole-forest reads, kept while the tenant's revision stays the
 * same. Decoding, assembling and encoding thousands of nodes costs far more than the revision
 * check (one indexed row), and every write bumps the revision in its own transaction, so an entry
 * is never served after a write committed, whichever replica made it.
 */
export class EncodedReadCache extends Context.Tag("@portfolio/referential/EncodedReadCache")<
  EncodedReadCache,
  EncodedReadCacheShape
>() {
  /** Keeps at most `budgetBytes` of encoded bodies, dropping the least recently used first. */
  static readonly layer = (budgetBytes: number) =>
    Layer.sync(EncodedReadCache, () => {
      const slots = new LRUCache<string, Slot>({ maxSize: budgetBytes })
      return {
        get: (key) => slots.get(key)?.entry,
        set: (key, entry) => void slots.set(key, { entry, sized: false }, { size: 1 }),
        built: (key, entry, bytes) => {
          const slot = slots.peek(key)
          if (slot === undefined || slot.entry !== entry || slot.sized) return
          // A new slot: `set` of the very same value keeps its old size.
          slots.set(key, { entry, sized: true }, { size: Math.max(1, bytes) })
        },
        evict: (key, entry) => {
          if (slots.peek(key)?.entry === entry) slots.delete(key)
        }
      }
    })

  /** The budget of `REFERENTIAL_READ_CACHE_MB`. */
  static readonly live = Layer.unwrapEffect(Effect.map(ReferentialSettings, (settings) => EncodedReadCache.layer(settings.readCacheBytes)))
}

const encoder = new TextEncoder()

/**
 * Answers `read` encoded with `schema`, from the cache when the tenant's revision has not moved.
 * `read` comes with its services provided: a memoised build must not hold on to a request.
 * The revision is read before the data, so an entry never carries a revision newer than its
 * content; one built after a later write is newer still and is served as is.
 */
export const cachedJson = <A, I>(form: string, tenantId: string, schema: Schema.Schema<A, I>, read: Effect.Effect<A>) =>
  Effect.gen(function*() {
    const cache = yield* EncodedReadCache
    const key = `${tenantId}:${form}`
    const revision = yield* referentialRevision(tenantId)
    let entry = cache.get(key)
    if (entry === undefined || entry.revision < revision) {
      const build = read.pipe(
        Effect.flatMap(Schema.encode(schema)),
        Effect.map((encoded) => encoder.encode(JSON.stringify(encoded))),
        Effect.orDie
      )
      entry = { revision, body: yield* Effect.cached(build) }
      cache.set(key, entry)
    }
    const cached = entry
    const body = yield* cached.body.pipe(Effect.tapErrorCause(() => Effect.sync(() => cache.evict(key, cached))))
    cache.built(key, cached, body.byteLength)
    return HttpServerResponse.uint8Array(body, { contentType: "application/json" })
  })
