import { setTimeout as sleep } from "node:timers/promises"

/**
 * What ends the drills before their end: the time budget, a signal, an uncaught error. Carried as
 * the reason of the drills' AbortSignal; a drill cut short reports it.
 */
export class Interrupted extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

/** Why `signal` was aborted, in words. */
export const reasonOf = (signal: AbortSignal): string => (signal.reason instanceof Interrupted ? signal.reason.reason : String(signal.reason))

/** A pause that ends (rejects) at once when `signal` is aborted. */
export const pause = (ms: number, signal?: AbortSignal): Promise<void> => sleep(ms, undefined, signal === undefined ? {} : { signal })

/**
 * `work`, or the abort of `signal`, whichever comes first: a drill cut at the deadline is not
 * waited for. What it still does afterwards is left to run out (its pauses end with the signal,
 * the cluster refuses to start anything) and its failure, if any, is nobody's.
 */
export const interruptible = <A>(work: Promise<A>, signal: AbortSignal): Promise<A> => {
  work.catch(() => undefined)
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<A>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener("abort", onAbort, { once: true })
    work.then(
      (value) => (signal.removeEventListener("abort", onAbort), resolve(value)),
      (error) => (signal.removeEventListener("abort", onAbort), reject(error))
    )
  })
}

/** Waits for `work` at most `ms`; answers whether it ended (a failure is an end). */
export const bounded = async (work: Promise<unknown> | undefined, ms: number): Promise<boolean> => {
  if (work === undefined) return true
  const timer = new AbortController()
  const ended = await Promise.race([
    work.then(() => true, () => true),
    sleep(ms, false, { signal: timer.signal }).catch(() => false)
  ])
  timer.abort()
  return ended
}

/**
 * The drills' time budget: a deadline (the budget's end less what stopping everything and printing
 * needs), the signal the watchdog aborts there, and the estimates that keep a round or a drill
 * from starting when it is not expected to end before it: what the code waits for until a drill
 * has run once, then the longest it took, with a margin.
 */
export class Budget {
  readonly deadline: number
  readonly #controller = new AbortController()
  readonly #measured = new Map<string, number>()

  constructor(readonly startedAt: number, readonly budgetMs: number, readonly reserveMs: number, readonly margin = 1.2) {
    this.deadline = startedAt + budgetMs - reserveMs
  }

  /** Aborted at the deadline (once `arm`ed), or by `stop`. */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** Starts the watchdog: at the deadline, `stop("time budget")`. */
  arm(onStop: (reason: string) => void = () => undefined) {
    const reason = `time budget (${this.budgetMs / 60_000} minutes)`
    setTimeout(() => {
      if (this.stop(reason)) onStop(reason)
    }, Math.max(0, this.deadline - Date.now())).unref()
  }

  /** Stops the drills now, for `reason`; answers whether this call did (the first one). */
  stop(reason: string): boolean {
    if (this.signal.aborted) return false
    this.#controller.abort(new Interrupted(reason))
    return true
  }

  /** Whether something expected to take `ms` ends before the deadline if it starts now. */
  fits(ms: number): boolean {
    return !this.signal.aborted && Date.now() + ms <= this.deadline
  }

  /** What `name` is expected to take: the longest it took so far with the margin, or `expectedMs` until it has run. */
  estimate(name: string, expectedMs: number): number {
    const took = this.#measured.get(name)
    return took === undefined ? expectedMs : Math.round(took * this.margin)
  }

  /** What `name` took this time. */
  record(name: string, ms: number) {
    this.#measured.set(name, Math.max(this.#measured.get(name) ?? 0, ms))
  }
}
