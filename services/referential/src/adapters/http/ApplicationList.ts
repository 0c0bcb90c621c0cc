import type { ApplicationFilters } from "@portfolio/domain"
import { LargeBody } from "@portfolio/platform/http"
import { Effect, Stream } from "effect"
import { toApplication } from "../../domain/ApplicationView.js"
import { ApplicationRepository } from "../../ports/ApplicationRepository.js"
import { type ApplicationFragment as Fragment, EncodedReadCache, type Fragments } from "./EncodedReadCache.js"
import { applicationJsons, arrayPieces } from "./WireJson.js"

/** Records read per statement for the applications whose JSON is made again. */
const RecordBatch = 1_000

/** About what a piece of the list holds as it goes to the compressor. */
const ListPieceBytes = 256 * 1024

/**
 * What a kept fragment costs beside its JSON (the map's entry, the code, the fragment and its
 * view of the bytes): 218 bytes measured with 10,000 of them.
 */
const FragmentOverheadBytes = 220

/**
 * The whole application list (every application matching `filters`, by code) as pieces of its
 * JSON, made from the JSON of each application kept from the last list of the tenant and the
 * records of those written since: after a write of one application, reading the list costs its
 * codes and revisions (one statement, two columns) and that one record, not 10,000 records decoded
 * and encoded again (docs/architecture.md, "The read path"). Every code, revision and record is
 * read from one snapshot, and a fragment is used only at the revision that snapshot shows, so the
 * list is as of one moment. Fragments are kept once a list of the tenant is large (LargeBody or
 * more), within a quarter of the read cache's budget; a small list is made from its records alone.
 */
export const wholeApplicationList = (tenantId: string, filters: ApplicationFilters) =>
  Effect.gen(function*() {
    const cache = yield* EncodedReadCache
    const applications = yield* ApplicationRepository
    const tenant = tenantId.toLowerCase()
    const kept = cache.fragments(tenant, "list")
    // What this list uses of the kept fragments, taken when the snapshot's revision is checked:
    // another list made meanwhile may replace them with later ones.
    const used = new Map<string, Fragment>()
    const made = new Map<string, Fragment>()
    let order: ReadonlyArray<{ readonly code: string; readonly revision: number }> = []
    const held = (code: string, revision: number) => {
      const fragment = kept?.byCode.get(code)
      if (fragment === undefined || fragment.revision !== revision) return false
      used.set(code, fragment)
      return true
    }
    yield* Stream.runForEach(
      applications.listAllChanged(tenantId, filters, held, RecordBatch),
      (listed) =>
        Effect.sync(() => {
          if (listed._tag === "Order") order = listed.order
          else {
            const jsons = applicationJsons(listed.records.map(toApplication))
            listed.records.forEach((record, i) => made.set(record.code, { revision: record.revision, json: jsons[i]! }))
          }
        })
    )
    const elements = order.map(({ code }) => (made.get(code) ?? used.get(code))!.json)
    const bytes = elements.reduce((total, json) => total + json.byteLength + 1, 1)
    if (kept !== undefined || bytes >= LargeBody) cache.keepFragments(tenant, "list", keptWith(kept, made))
    return arrayPieces(elements, ListPieceBytes)
  })

/** `kept` (or none) with `made` in, a later revision replacing an earlier one. */
const keptWith = (kept: Fragments<Fragment> | undefined, made: ReadonlyMap<string, Fragment>): Fragments<Fragment> => {
  const fragments = kept ?? { byCode: new Map(), bytes: 0 }
  for (const [code, fragment] of made) {
    const before = fragments.byCode.get(code)
    if (before !== undefined && before.revision >= fragment.revision) continue
    fragments.byCode.set(code, fragment)
    fragments.bytes += fragment.json.byteLength + (before === undefined ? FragmentOverheadBytes : -before.json.byteLength)
  }
  return fragments
}
