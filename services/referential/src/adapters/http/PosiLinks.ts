import { LargeBody } from "@portfolio/platform/http"
import { Effect, Stream } from "effect"
import { ApplicationRepository } from "../../ports/ApplicationRepository.js"
import { EncodedReadCache } from "./EncodedReadCache.js"
import { fragmentMaking } from "./Fragments.js"
import { type LinkedJson, linkedApplicationJsons } from "./WireJson.js"

/**
 * Each application's object in posi, for the holes of a template of `templateBytes` (WireJson.ts,
 * `posiPieces`), made from the objects kept from the last filling of the tenant and the
 * applications written since: after a write of one application, posi costs that application and
 * its children read again (ports/ApplicationRepository.ts, `listLinkedChanged`), not 10,000
 * applications decoded and encoded again, nor their versions asked (docs/architecture.md, "The
 * read path"). First the kept ones still current, then the others as they are read (those `first`
 * names, which posi's first piece shows, before the rest). An object is used only at the version
 * the snapshot shows (Fragments.ts), so posi is as of one moment. Kept once posi is large (its
 * template LargeBody or more), within the read cache's share for fragments, with the write
 * sequence they are as of.
 */
export const linkedJsons = (tenantId: string, first: ReadonlyArray<string>, templateBytes: number) =>
  Stream.unwrap(Effect.gen(function*() {
    const applications = yield* ApplicationRepository
    const making = fragmentMaking(yield* EncodedReadCache, tenantId.toLowerCase(), "posi")
    // Every application's version in this snapshot as it is read, holding nothing; holding, those
    // of the applications that moved since (every other is as kept).
    const versions: Array<{ readonly code: string; readonly version: string }> = []
    let writeSeq: number | undefined
    // Until `Versions` comes, if ever, every application is read (holding nothing, or nothing to be trusted).
    let holding = false
    const holdingSince = making.writeSeq === undefined ? undefined : { writeSeq: making.writeSeq, held: making.held }
    return applications.listLinkedChanged(tenantId, first, holdingSince).pipe(
      Stream.map((listed): ReadonlyArray<LinkedJson> => {
        switch (listed._tag) {
          case "WriteSeq": {
            writeSeq = listed.writeSeq
            return []
          }
          case "Versions": {
            holding = true
            const moved = new Set<string>()
            const jsons: Array<LinkedJson> = []
            for (const { code, version } of listed.versions) {
              moved.add(code)
              versions.push({ code, version })
              const json = making.json(code, version)
              if (json !== undefined) jsons.push({ code, json })
            }
            // Not written since, nor their parents: as kept (a fragment is its own code and JSON).
            for (const fragment of making.kept.values()) {
              if (!moved.has(fragment.code)) jsons.push(fragment)
            }
            return jsons
          }
          case "Linked": {
            const jsons = linkedApplicationJsons(listed.applications.map(({ application }) => application))
            listed.applications.forEach(({ version }, i) => {
              making.made(jsons[i]!.code, version, jsons[i]!.json)
              if (!holding) versions.push({ code: jsons[i]!.code, version })
            })
            return jsons
          }
        }
      }),
      Stream.onEnd(Effect.sync(() => {
        if (templateBytes < LargeBody || writeSeq === undefined) return
        if (holding) making.keepMoved(versions, writeSeq)
        else making.keep(versions, true, writeSeq)
      }))
    )
  }))
