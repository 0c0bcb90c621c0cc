import { Effect } from "effect"
import { randomUUID } from "node:crypto"

export const newId: Effect.Effect<string> = Effect.sync(() => randomUUID())
