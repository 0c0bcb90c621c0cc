import { LargeBody } from "@portfolio/platform/http"
import { Effect, Stream } from "effect"
import { ApplicationRepository } from "../../ports/ApplicationRepository.js"
import { EncodedReadCache } from "./EncodedReadCache.js"
import { fragmentMaking } from "./Fragments.js"
import { type LinkedJson, linkedApplicationJsons } from "./WireJson.js"

/**
 * Each application's object in posi, for the holes of a template of `templateBytes` (WireJson.ts,
 * `posiPieces`), made from the objects kept from the last filling of the tenant and the
 * applications written since: after a write of one application, posi costs every application's
 * version (three short columns, in two passes: ports/ApplicationRepository.ts) and that one application, not 10,000 applications
 * decoded and encoded again (docs/architecture.md, "The read path"). First the kept ones still
 * current, then the others as they are read (those `first` names, which posi's first piece shows,
 * before the rest). An object is used only at the version the snapshot shows (Fragments.ts), so
 * posi is as of one moment. Kept once posi is large (its template LargeBody or more), within the
 * read cache's share for fragments.
 */
export const linkedJsons = (tenantId: string, first: ReadonlyArray<string>, templateBytes: number) =>
  Stream.unwrap(Effect.gen(function*() {
    const applications = yield* ApplicationRepository
    const making = fragmentMaking(yield* EncodedReadCache, tenantId.toLowerCase(), "posi")
    // Every application's version in this snapshot: given first when something is held, else
    // those of the applications as they are read.
    const versions: Array<{ readonly code: string; readonly version: string }> = []
    // Holding nothing, every application is read at once, without asking their versions first.
    return applications.listLinkedChanged(tenantId, first, making.holding ? making.held : undefined).pipe(
      Stream.map((listed): ReadonlyArray<LinkedJson> => {
        if (listed._tag === "Versions") {
          for (const version of listed.versions) versions.push(version)
          return listed.versions.flatMap(({ code, version }) => {
            const json = making.json(code, version)
            return json === undefined ? [] : [{ code, json }]
          })
        }
        const jsons = linkedApplicationJsons(listed.applications.map(({ application }) => application))
        listed.applications.forEach(({ version }, i) => {
          making.made(jsons[i]!.code, version, jsons[i]!.json)
          if (!making.holding) versions.push({ code: jsons[i]!.code, version })
        })
        return jsons
      }),
      Stream.onEnd(Effect.sync(() => {
        if (templateBytes >= LargeBody) making.keep(versions, true)
      }))
    )
  }))
