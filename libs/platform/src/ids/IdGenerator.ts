import { Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"

export interface IdGeneratorShape {
  /** A new identifier: a random (version 4) UUID in production. */
  readonly next: Effect.Effect<string>
  /** `next` as a plain call, for hot paths that run outside a fiber. */
  readonly nextNow: () => string
}

/**
 * Where every identifier a service mints comes from (events, invitations, tokens, audit entries).
 * A reference with random UUIDs as its default, like Effect's own Clock: nothing to wire in
 * `main.ts`, and a test replaces it with `IdGenerator.sequential` to know the ids in advance.
 */
const IdGeneratorReference = Context.Reference<IdGeneratorShape>("@portfolio/platform/IdGenerator", {
  defaultValue: () => ({ next: Effect.sync(randomUUID), nextNow: randomUUID })
})

// Effect 4's references are values, not classes: `sequential` rides on the reference itself, so
// that `IdGenerator.sequential()` reads as it did.
export const IdGenerator = Object.assign(IdGeneratorReference, {
  /** `00000000-0000-4000-8000-000000000001`, `...0002` and so on: valid UUIDs, in order. */
  sequential: (first = 1) =>
    Layer.sync(IdGeneratorReference, () => {
      let n = first
      const nextNow = () => `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, "0")}`
      return { next: Effect.sync(nextNow), nextNow }
    })
})
export type IdGenerator = IdGeneratorShape

/** A new identifier from the current `IdGenerator`. */
export const newId: Effect.Effect<string> = Effect.flatMap(IdGenerator, (ids) => ids.next)
