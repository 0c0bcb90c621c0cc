import { type EncodedReadCacheShape, type Fragment, type FragmentKinds } from "./EncodedReadCache.js"

/**
 * One making of an answer from application fragments (the whole list, posi's links), after the
 * one rule both follow. The fragments kept by the last making are a snapshot that nothing changes:
 * this making reads them as they were when it started, and a fragment is used only at the version
 * this making's own snapshot of the database shows, so the answer is as of one moment. What is not
 * held at that version is made again (`made`). `keep` then replaces the kept fragments whole with
 * a new snapshot, never in place: a making still reading the old one is not disturbed, and two
 * makings side by side cost at most a fragment made again by the next.
 */
export const fragmentMaking = <K extends keyof FragmentKinds>(cache: EncodedReadCacheShape, tenant: string, kind: K) => {
  type Version = FragmentKinds[K]
  const fragments = cache.fragments(tenant, kind)
  const kept = fragments?.byCode
  const made = new Map<string, Fragment<Version>>()
  /** The kept fragment of `code` if it is at `version`. */
  const current = (code: string, version: Version) => {
    const fragment = kept?.get(code)
    return fragment !== undefined && fragment.version === version ? fragment : undefined
  }
  /** The fragment of `code` at `version`: made by this making, or held at it. */
  const at = (code: string, version: Version) => made.get(code) ?? current(code, version)
  /** Sets each of `listed` in `byCode` as made or held at its version; false once one is neither. */
  const setListed = (byCode: Map<string, Fragment<Version>>, listed: ReadonlyArray<{ readonly code: string; readonly version: Version }>) => {
    for (const { code, version } of listed) {
      const fragment = at(code, version)
      if (fragment === undefined) return false
      byCode.set(code, fragment)
    }
    return true
  }
  return {
    /** Whether anything was kept: holding nothing, a making need not ask the versions first. */
    holding: kept !== undefined,
    /** The write sequence the kept fragments are all of the tenant's applications as of, if they are. */
    writeSeq: fragments?.writeSeq,
    /** Every kept fragment, by code. */
    kept: kept ?? new Map<string, Fragment<Version>>(),
    /** Whether `code`'s fragment is held at `version`. */
    held: (code: string, version: Version) => current(code, version) !== undefined,
    /** The JSON of `code` at `version`: made by this making, or held at it. */
    json: (code: string, version: Version) => at(code, version)?.json,
    made: (code: string, version: Version, json: Uint8Array) => void made.set(code, { code, version, json }),
    /**
     * Keeps the fragments of every application `listed` at the version it was listed at. `every`:
     * `listed` is all of the tenant's applications, and a kept fragment of another (deleted) is let
     * go; otherwise (a filtered list) those of the others are kept as they were, to be checked at
     * their next use. Keeps nothing if one of `listed` was neither made nor held. `writeSeq`: the
     * write sequence `listed` is every application as of (`every` only).
     */
    keep: (listed: ReadonlyArray<{ readonly code: string; readonly version: Version }>, every: boolean, writeSeq?: number) => {
      const byCode = new Map(every || kept === undefined ? [] : kept)
      if (setListed(byCode, listed)) cache.keepFragments(tenant, kind, byCode, every ? writeSeq : undefined)
    },
    /**
     * Keeps the kept fragments, every application of the tenant as of an earlier write sequence,
     * with those of `moved` at their versions: the applications written since and the children of
     * those, all that may differ at `writeSeq`. Keeps nothing if one of `moved` was neither made
     * nor held. Where `keep` lists all 10,000 applications of a large tenant after a write of one,
     * this copies the map and sets a few: less for the next collection to promote.
     */
    keepMoved: (moved: ReadonlyArray<{ readonly code: string; readonly version: Version }>, writeSeq: number) => {
      if (kept === undefined) return
      const byCode = new Map(kept)
      if (setListed(byCode, moved)) cache.keepFragments(tenant, kind, byCode, writeSeq)
    }
  }
}
