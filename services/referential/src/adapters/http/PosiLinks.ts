import { LargeBody } from "@portfolio/platform/http"
import { Effect, Stream } from "effect"
import { ApplicationRepository } from "../../ports/ApplicationRepository.js"
import { EncodedReadCache, type Fragments, type LinkedFragment } from "./EncodedReadCache.js"
import { type LinkedJson, linkedApplicationJsons } from "./WireJson.js"

/**
 * What a kept fragment costs beside its JSON (the map's entry, the code, the version, the fragment
 * and its view of the bytes), as the list's fragments are counted (ApplicationList.ts).
 */
const FragmentOverheadBytes = 260

/**
 * Each application's object in posi, for the holes of a template of `templateBytes` (WireJson.ts,
 * `posiPieces`), made from the objects kept from the last filling of the tenant and the
 * applications written since: after a write of one application, posi costs every application's
 * version (one statement, three short columns) and that one application, not 10,000 applications
 * decoded and encoded again (docs/architecture.md, "The read path"). First the kept ones still
 * current, then the others as they are read (those `first` names, which posi's first piece shows,
 * before the rest). An object is used only at the version the snapshot shows, so posi is as of
 * one moment; a filling reads the fragments as they were when it started (a later filling replaces
 * them whole, never in place). Kept once posi is large (its template LargeBody or more), within the
 * read cache's share for fragments.
 */
export const linkedJsons = (tenantId: string, first: ReadonlyArray<string>, templateBytes: number) =>
  Stream.unwrap(Effect.gen(function*() {
    const cache = yield* EncodedReadCache
    const applications = yield* ApplicationRepository
    const tenant = tenantId.toLowerCase()
    const kept = cache.fragments(tenant, "posi")?.byCode
    const current = (code: string, version: string) => kept?.get(code)?.version === version
    const made = new Map<string, LinkedFragment>()
    let versions: ReadonlyArray<{ readonly code: string; readonly version: string }> | undefined
    // Holding nothing, every application is read at once, without asking their versions first.
    return applications.listLinkedChanged(tenantId, first, kept === undefined ? undefined : current).pipe(
      Stream.map((listed): ReadonlyArray<LinkedJson> => {
        if (listed._tag === "Versions") {
          versions = listed.versions
          return versions.flatMap(({ code, version }) => current(code, version) ? [{ code, json: kept!.get(code)!.json }] : [])
        }
        const jsons = linkedApplicationJsons(listed.applications.map(({ application }) => application))
        listed.applications.forEach(({ version }, i) => made.set(jsons[i]!.code, { version, json: jsons[i]!.json }))
        return jsons
      }),
      Stream.onEnd(Effect.sync(() => {
        if (templateBytes < LargeBody) return
        // Every application at the version this filling read: those made, and the kept ones still current.
        const byCode = new Map(made)
        for (const { code, version } of versions ?? []) {
          if (byCode.has(code)) continue
          const fragment = current(code, version) ? kept!.get(code) : undefined
          if (fragment === undefined) return
          byCode.set(code, fragment)
        }
        let bytes = 0
        for (const fragment of byCode.values()) bytes += fragment.json.byteLength + FragmentOverheadBytes
        cache.keepFragments(tenant, "posi", { byCode, bytes } satisfies Fragments<LinkedFragment>)
      }))
    )
  }))
