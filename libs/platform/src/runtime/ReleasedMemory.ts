import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

type Collect = () => void

type Gc = (options: { readonly type: "major" | "minor"; readonly execution?: "async"; readonly flavor?: "regular" | "last-resort" }) => Promise<void> | undefined

let exposed: Gc | undefined

/**
 * V8's own `gc`, exposed at the first call rather than by a node option, so that a pod's own
 * NODE_OPTIONS cannot leave it out.
 */
const gc = (): Gc => {
  if (exposed === undefined) {
    setFlagsFromString("--expose-gc")
    exposed = runInNewContext("gc") as Gc
  }
  return exposed
}

/** The event loop's utilization since the previous call (since the first call: since start). */
const utilizationSinceLastCall = () => {
  let last = performance.eventLoopUtilization()
  return () => {
    const window = performance.eventLoopUtilization(last)
    last = performance.eventLoopUtilization()
    return window.utilization
  }
}

/** A full collection, off the request path (`execution: "async"`: V8 runs it as a task of its own). */
const collectNow: Collect = () => void gc()({ type: "major", execution: "async" })

/**
 * A full collection that also gives back the pages V8 keeps for reuse (`flavor: "last-resort"`:
 * collections until nothing more is freed, compacting, then the pooled pages unmapped). After a
 * plain full collection V8 keeps the freed pages of its old generation resident: 70 s after the
 * last read of bench:scale, the referential's V8 heap was 41 MB but its pages held about 90 MB
 * (docs/architecture.md, "Memory"). It holds the main thread longer than a plain one: 60 to 72 ms
 * against 29 to 31 with 30 MB of live objects here (130 to 150 against 51 with 73 MB). For a process
 * gone quiet, not for a busy one (`quiet.idleBelow`).
 */
export const collectCompacting: Collect = () => void gc()({ type: "major", execution: "async", flavor: "last-resort" })

/**
 * A collection of the young generation only (a scavenge: a few megabytes, about a millisecond): it
 * frees the array buffers that died young, such as the chunks of an answer a proxy copied through.
 */
export const collectYoung: Collect = () => void gc()({ type: "minor" })

/**
 * What a cache calls with the bytes it let go of: once `thresholdBytes` have been released since
 * the last full collection, one runs, at most one per `minIntervalMs`. A cache's answers are array
 * buffers outside V8's heap, freed only when their wrappers are collected, and an idle process
 * allocates too little for V8 to collect its old generation at all: 70 s after its last read, with
 * every entry of its read cache expired, the referential still held 73 MB of array buffers, which one
 * forced collection freed (docs/architecture.md, "Memory"). A busy process collects by itself;
 * the interval bounds what this adds to it. With `quiet`, what was released short of the
 * threshold, `quiet.minBytes` or more, is collected once nothing more has been released for
 * `quiet.ms`: the last answers a cache drops as its process goes idle (8.4 MB of them in the
 * referential, 70 s after its last read) would otherwise stay until its next busy moment, while
 * a lone small entry expiring now and then is not worth a collection of its own. What counts
 * for it is what was released since the last quiet collection, collections for the threshold
 * included: those do not give back what `quiet.collect` does (`collectCompacting`).
 */
export const makeReleaseCollector = (options: {
  readonly thresholdBytes: number
  readonly minIntervalMs: number
  readonly quiet?: {
    readonly ms: number
    readonly minBytes: number
    /** The quiet collection's own kind (`collectCompacting`), else the same as the others. */
    readonly collect?: Collect
    /**
     * When what releases was last used (on the clock of `now`): quiet then also means unused for
     * `ms`, so that a compacting collection waits for an idle process rather than a pause in a
     * busy one.
     */
    readonly lastUsedAt?: () => number
    /**
     * The event loop's utilization over the quiet time (0 to 1) below which the process counts as
     * idle: above it, the quiet collection waits another `ms`. What releases may be unused while
     * the process is busy with other work (writes, uncached reads).
     */
    readonly idleBelow?: number
  }
  /** For tests: the event loop's utilization since the last call (`performance.eventLoopUtilization`). */
  readonly utilization?: () => number
  /** For tests. */
  readonly collect?: Collect
  readonly now?: () => number
}): (bytes: number) => void => {
  const collect = options.collect ?? collectNow
  const now = options.now ?? (() => performance.now())
  const utilization = options.utilization ?? utilizationSinceLastCall()
  let released = 0
  /** Released since the last quiet collection, collections for the threshold or not. */
  let sinceQuiet = 0
  let lastAt = -Infinity
  let scheduled = false
  let lastReleaseAt = -Infinity
  let quietCheck: ReturnType<typeof setTimeout> | undefined
  const schedule = (quiet: boolean) => {
    scheduled = true
    const run = () => {
      scheduled = false
      released = 0
      if (quiet) sinceQuiet = 0
      lastAt = now()
      ;(quiet ? options.quiet?.collect ?? collect : collect)()
    }
    // Never from inside the cache's own call: the entry is still referenced there.
    setTimeout(run, Math.max(0, lastAt + options.minIntervalMs - now())).unref()
  }
  /** Checks after `delay` whether the releases have gone quiet, and collects what they left if so. */
  const checkQuiet = (quiet: NonNullable<typeof options.quiet>, delay: number) => {
    quietCheck = setTimeout(() => {
      quietCheck = undefined
      const quietFor = now() - Math.max(lastReleaseAt, quiet.lastUsedAt?.() ?? -Infinity)
      // Read at every check, so that each reading covers the time since the last one.
      const busy = quiet.idleBelow !== undefined && utilization() >= quiet.idleBelow
      if (quietFor < quiet.ms) checkQuiet(quiet, quiet.ms - quietFor)
      else if (sinceQuiet < quiet.minBytes) return
      // Busy, or a collection for the threshold still waiting for the interval: asked again later.
      else if (busy || scheduled) checkQuiet(quiet, quiet.ms)
      else schedule(true)
    }, delay)
    quietCheck.unref()
  }
  return (bytes) => {
    released += bytes
    sinceQuiet += bytes
    lastReleaseAt = now()
    if (options.quiet !== undefined && quietCheck === undefined) {
      // The window the first check reads starts now, not at the last check.
      if (options.quiet.idleBelow !== undefined) utilization()
      checkQuiet(options.quiet, options.quiet.ms)
    }
    if (released < options.thresholdBytes || scheduled) return
    schedule(false)
  }
}

/**
 * What a process calls with the bytes of each chunk it passes on and lets go: an answer's chunks
 * copied through a proxy, a compressed answer decompressed for a client that accepts no coding.
 * Every chunk is an array buffer of its own, freed only when V8 collects its wrapper, and passing
 * chunks on allocates too few objects for V8 to collect often. A young-generation collection
 * frees them (collectYoung), counted as the chunks go so that a single answer of megabytes is
 * collected while it passes: every 2 MB, at most forty a second, and what passed short of that,
 * 256 KB or more, once nothing more has for a second. At every 4 MB and five a second, a 9.6 MB
 * answer left up to 11.5 MB of dead chunks in the gateway between two collections (a memory log
 * every 200 ms); a scavenge of a service's young generation costs well under a millisecond, and
 * the tree through the gateway was no slower (`npm run bench`, one run each: 175 req/s against 143
 * before). Without it, the referential decompressing posi's 13 MB for such a client held 11 MB of
 * dead chunks at its end (docs/architecture.md, "Memory").
 */
export const makePassedChunksCollector = (): ((bytes: number) => void) =>
  makeReleaseCollector({ thresholdBytes: 2 * 1024 * 1024, minIntervalMs: 25, quiet: { ms: 1_000, minBytes: 256 * 1024 }, collect: collectYoung })

/**
 * Gives the memory of `bytes` back now rather than when V8 collects its wrapper, by detaching its
 * array buffer: anything else viewing that buffer then reads nothing, so the caller must hold its
 * only view (a piece made for one use and used). V8 collects dead array buffers only by their
 * count against an external limit of some 64 MB: a process that makes 256 KiB pieces and lets
 * them go held up to 64 MB of dead ones (117 MB resident at its peak, against 51 detaching each,
 * in a loop of 2,000), and the referential's resident memory rose with every large answer made
 * (docs/architecture.md, "Memory"). Only a buffer its view covers whole is released: a small
 * Buffer (under half of `Buffer.poolSize`, 32 KiB on Node 24) is a slice of Node's shared pool,
 * which holds other Buffers too.
 */
export const releaseNow = (bytes: Uint8Array): void => {
  const buffer = bytes.buffer
  if (buffer instanceof ArrayBuffer && !buffer.detached && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength && bytes.byteLength > 0) {
    try {
      buffer.transfer(0)
    } catch {
      // One V8 or Node will not let go of (made not detachable) is left to the collector.
    }
  }
}
