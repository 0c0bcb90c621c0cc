import { HttpServerResponse } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { referentialRevision } from "../../usecases/FunctionQueries.js"

interface Entry {
  readonly revision: number
  /** Memoised: concurrent requests after a write share one build instead of each making theirs. */
  readonly body: Effect.Effect<Uint8Array>
}

export interface EncodedReadCacheShape {
  readonly get: (key: string) => Entry | undefined
  readonly set: (key: string, entry: Entry) => void
  /** Counts the built body of `entry` against the budget, dropping the coldest entries beyond it. */
  readonly built: (key: string, entry: Entry, bytes: number) => void
  /** Drops `entry` if it is still the one cached under `key`. */
  readonly evict: (key: string, entry: Entry) => void
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
      // A Map iterates in insertion order: re-inserting on use keeps the coldest entry first.
      const entries = new Map<string, { readonly entry: Entry; bytes: number }>()
      let total = 0
      const drop = (key: string) => {
        total -= entries.get(key)?.bytes ?? 0
        entries.delete(key)
      }
      return {
        get: (key) => {
          const slot = entries.get(key)
          if (slot === undefined) return undefined
          entries.delete(key)
          entries.set(key, slot)
          return slot.entry
        },
        set: (key, entry) => {
          drop(key)
          entries.set(key, { entry, bytes: 0 })
        },
        built: (key, entry, bytes) => {
          const slot = entries.get(key)
          if (slot === undefined || slot.entry !== entry || slot.bytes !== 0) return
          slot.bytes = bytes
          total += bytes
          for (const coldest of entries.keys()) {
            if (total <= budgetBytes) break
            drop(coldest)
          }
        },
        evict: (key, entry) => {
          if (entries.get(key)?.entry === entry) drop(key)
        }
      }
    })
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
