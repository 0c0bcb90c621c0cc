import { Effect, Exit, type Scope } from "effect"

/** Rows one statement takes at most: its parameters stay far below PostgreSQL's 65,535. */
export const MaxStatementRows = 256

interface Pending<A, B, E> {
  readonly input: A
  readonly resume: (result: Exit.Exit<B, E>) => void
}

/** A call per caller, answered once its own row's statement committed. */
export type StatementBatcher<A, B, E> = (input: A) => Effect.Effect<B, E>

/**
 * Turns a statement that serves many callers at once into a call per caller. Whatever is asked
 * while the previous statement runs goes into the next one (at most `maxBatch`): when idle a call
 * is written at once, and under load a delivery costs a fraction of a round trip to PostgreSQL,
 * whose per-statement cost (a socket write, a parse, a commit) dominated the dispatcher's profile.
 * The callers wait in a plain array resumed by callback: a queue and a deferred per call cost
 * several times more CPU than the statement's own share (measured: ~45 us a call against ~5).
 *
 * `run` answers one result per input, in order. When a batch of several fails, each input is run
 * alone, so that one bad row (an event PostgreSQL refuses) fails its own caller and no other.
 * Each caller resumes once its own statement committed; a caller that goes away meanwhile leaves
 * its row to the statement (the sweeper finds anything it left pending).
 */
export const makeStatementBatcher = <A, B, E>(
  run: (batch: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>,
  maxBatch: number,
  options: {
    /**
     * The least time from a statement's start to the next one's, unless the next is full: under a
     * steady flow of calls (a success after each POST) statements then stay few and large, where
     * writing each as soon as the last ended made them of one or two rows each. A call after a
     * quiet spell is written at once.
     */
    readonly minIntervalMs?: number
  } = {}
): Effect.Effect<StatementBatcher<A, B, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const minIntervalMs = options.minIntervalMs ?? 0
    let lastStart = Number.NEGATIVE_INFINITY
    const waiting: Array<Pending<A, B, E>> = []
    let wake: (() => void) | undefined
    const someoneWaits = Effect.callback<void>((resume) => {
      if (waiting.length > 0) return resume(Effect.void)
      wake = () => {
        wake = undefined
        resume(Effect.void)
      }
    })
    const write = (batch: ReadonlyArray<Pending<A, B, E>>): Effect.Effect<void> =>
      Effect.flatMap(Effect.exit(run(batch.map((p) => p.input))), (exit) =>
        Exit.isFailure(exit) && batch.length > 1
          ? Effect.forEach(batch, (p) => write([p]), { discard: true })
          : Effect.sync(() => batch.forEach((p, i) => p.resume(Exit.map(exit, (results) => results[i]!)))))
    // One statement at a time: measured, three at once made smaller batches and fewer deliveries a
    // second, PostgreSQL's CPU being the limit rather than its commits' latency.
    const spaced = Effect.suspend(() => {
      const wait = lastStart + minIntervalMs - performance.now()
      if (wait <= 0 || waiting.length >= maxBatch) return Effect.void
      return Effect.callback<void>((resume) => {
        const timer = setTimeout(() => resume(Effect.void), wait)
        return Effect.sync(() => clearTimeout(timer))
      })
    })
    yield* someoneWaits.pipe(
      Effect.andThen(spaced),
      Effect.andThen(Effect.suspend(() => {
        lastStart = performance.now()
        return write(waiting.splice(0, maxBatch))
      })),
      Effect.forever,
      Effect.forkScoped
    )
    return (input: A): Effect.Effect<B, E> =>
      Effect.callback<B, E>((resume) => {
        waiting.push({ input, resume })
        wake?.()
      })
  })

/**
 * Hands each input the rows that name it (`rowKey` equal to its `inputKey`), in the inputs' order.
 * Rows go to the first input naming them only: two callers asking for the same row in one batch
 * (the same delivery claimed twice, an event redelivered while it was being recorded) never both
 * get it.
 */
export const rowsPerInput = <A, R>(inputs: ReadonlyArray<A>, rows: ReadonlyArray<R>, inputKey: (a: A) => string, rowKey: (r: R) => string) => {
  const byKey = new Map<string, Array<R>>()
  for (const row of rows) {
    const key = rowKey(row)
    const group = byKey.get(key)
    if (group === undefined) byKey.set(key, [row])
    else group.push(row)
  }
  return inputs.map((input) => {
    const key = inputKey(input)
    const group = byKey.get(key) ?? []
    byKey.delete(key)
    return group
  })
}
