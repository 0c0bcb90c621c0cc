import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { IdGenerator, newId } from "../../src/ids/IdGenerator.js"

const isUuid = Schema.is(Schema.String.check(Schema.isUUID()))

describe("IdGenerator", () => {
  it.effect("mints random UUIDs when nothing is provided", () =>
    Effect.gen(function*() {
      const ids = yield* Effect.all(Array.from({ length: 100 }, () => newId))
      expect(ids.every(isUuid)).toBe(true)
      expect(new Set(ids).size).toBe(100)
    }))

  it.effect("mints known, valid UUIDs in order with the sequential test layer", () =>
    Effect.gen(function*() {
      const ids = yield* Effect.all([newId, newId, newId])
      expect(ids).toEqual([
        "00000000-0000-4000-8000-000000000001",
        "00000000-0000-4000-8000-000000000002",
        "00000000-0000-4000-8000-000000000003"
      ])
      expect(ids.every(isUuid)).toBe(true)
    }).pipe(Effect.provide(IdGenerator.sequential())))
})
