import { afterAll, beforeAll, inject } from "vitest"
import { limitsOff } from "./provisioning.js"
import { remember } from "./sharedSystems.js"
import { Harness } from "./system.js"

/**
 * Starts the real system once for the calling test file (fresh database, free ports) and stops it
 * afterwards. `env` is extra configuration for every service, e.g. RATE_LIMIT_PER_MINUTE.
 */
export const useSystem = (env: Record<string, string> = {}): Harness => {
  const harness = new Harness()
  beforeAll(() => harness.start(env), 120_000)
  afterAll(() => harness.stop(), 60_000)
  return harness
}

/**
 * How long a shared system waits, once a file is done with it, for the worker's next file to take
 * it: the sequencer (vitest.config.ts) runs the files that share one after another, so a worker's
 * next one asks at once; a worker gone on to other files stops it rather than keep five idle
 * services beside them.
 */
const LingerMs = 10_000

/**
 * The shared system's settings: no limit of the gateway or of invitations in effect (`limitsOff`),
 * and no sign-in lockout of 127.0.0.1 by the console, whose failures count in the database across
 * files. A file whose subject is a limit has a system of its own.
 */
const SharedSettings = { ...limitsOff, CONSOLE_SIGN_IN_MAX_FAILURES_PER_ADDRESS: "100000" }

/**
 * This worker's shared system: vitest runs a worker's files in turn, in one module graph
 * (vitest.config.ts), so the files of a worker that share meet this one harness. `started` is its
 * start (settled once it serves, or failed), kept until it is stopped: a start that outlives its
 * file's hook is waited for, never raced.
 */
const shared = new Harness()
let started: Promise<void> | undefined
let stopping: Promise<void> | undefined
let linger: ReturnType<typeof setTimeout> | undefined
let forget: (() => void) | undefined

/** Stops it; forgets its registry record only once stopped (else the run's teardown removes it). */
const stopShared = () =>
  (stopping ??= (async () => {
    await started?.catch(() => {})
    started = undefined
    await shared.stop()
    forget?.()
    forget = undefined
  })().finally(() => {
    stopping = undefined
  }))

/** Whether every probed port of the system still answers ready (a hung or broken service is not handed on). */
const serving = async () => {
  if (shared.exited !== undefined) return false
  const ready = await Promise.all(shared.system.readyUrls.map((url) => fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) }).then((reply) => reply.ok, () => false)))
  return ready.every(Boolean)
}

const takeShared = async () => {
  clearTimeout(linger)
  await stopping
  if (started !== undefined) {
    if (await started.then(serving, () => false)) return
    await stopShared()
  }
  const starting = (async () => {
    try {
      await shared.start(SharedSettings)
    } catch (error) {
      await shared.stop()
      throw error
    }
    forget = remember(inject("sharedSystems"), shared.resources)
  })()
  started = starting
  await starting
}

/**
 * The system with no limit in effect (SharedSettings), shared by the files of a worker that call
 * this instead of `useSystem`, one file after another: about 10 CPU-s of starting and stopping saved
 * per file. A file may share only if it would pass after any other: it makes tenants, members and
 * names of its own, asserts nothing on what other files leave (the operator's lists, everyone's
 * mail, the logs, metrics), and leaves every service running and configured as it found it. A
 * system with a service exited or not ready is not handed on; the run's global setup removes what
 * the workers leave running (globalSetup.ts).
 */
export const useSharedSystem = (): Harness => {
  beforeAll(takeShared, 120_000)
  afterAll(() => {
    linger = setTimeout(() => {
      stopShared().catch((error: unknown) => console.error("the shared system did not stop; the run's teardown removes it:", error))
    }, LingerMs)
    linger.unref()
  })
  return shared
}
