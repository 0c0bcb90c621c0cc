import type { ApplicationFilters } from "@portfolio/domain"
import { LargeBody } from "@portfolio/platform/http"
import { Effect, Stream } from "effect"
import { toApplication } from "../../domain/ApplicationView.js"
import { ApplicationRepository } from "../../ports/ApplicationRepository.js"
import { EncodedReadCache } from "./EncodedReadCache.js"
import { fragmentMaking } from "./Fragments.js"
import { applicationJsons, arrayPieces, ListPieceBytes } from "./WireJson.js"

/** Records read per statement for the applications whose JSON is made again. */
const RecordBatch = 1_000

/**
 * The whole application list (every application matching `filters`, by code) as pieces of its
 * JSON, made from the JSON of each application kept from the last list of the tenant and the
 * records of those written since: after a write of one application, reading the list costs its
 * codes and revisions (one statement, two columns) and that one record, not 10,000 records decoded
 * and encoded again (docs/architecture.md, "The read path"). Every code, revision and record is
 * read from one snapshot, and a fragment is used only at the revision that snapshot shows
 * (Fragments.ts), so the list is as of one moment. Fragments are kept once a list of the tenant
 * is large (LargeBody or more), within the read cache's share for fragments, once its pieces are
 * all made; a small list is made from its records alone.
 */
export const wholeApplicationList = (tenantId: string, filters: ApplicationFilters) =>
  Effect.gen(function*() {
    const applications = yield* ApplicationRepository
    const making = fragmentMaking(yield* EncodedReadCache, tenantId.toLowerCase(), "list")
    let order: ReadonlyArray<{ readonly code: string; readonly revision: number }> = []
    yield* Stream.runForEach(
      applications.listAllChanged(tenantId, filters, making.held, RecordBatch),
      (listed) =>
        Effect.sync(() => {
          if (listed._tag === "Order") order = listed.order
          else {
            const jsons = applicationJsons(listed.records.map(toApplication))
            listed.records.forEach((record, i) => making.made(record.code, record.revision, jsons[i]!))
          }
        })
    )
    const elements = order.map(({ code, revision }) => making.json(code, revision)!)
    const keep = () => {
      const bytes = elements.reduce((total, json) => total + json.byteLength + 1, 1)
      if (making.holding || bytes >= LargeBody) {
        making.keep(order.map(({ code, revision }) => ({ code, version: revision })), Object.values(filters).every((value) => value === undefined))
      }
    }
    return piecesThen(arrayPieces(elements, ListPieceBytes), keep)
  })

/**
 * `pieces`, then `after` once the last is taken: the fragments are kept (a new map of every
 * application's, 6 to 10 ms at 10,000) after the answer has started rather than before its first
 * byte. The next making finds them kept once this one's pieces are all made, and one that starts
 * before only makes more itself (Fragments.ts).
 */
function* piecesThen(pieces: Iterable<Uint8Array>, after: () => void): Generator<Uint8Array> {
  yield* pieces
  after()
}
