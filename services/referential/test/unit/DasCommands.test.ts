import { describe, expect, layer } from "@effect/vitest"
import { Das, DasContentMaxBytes, DasSubmitted, ReferentialEvent } from "@portfolio/domain"
import { Effect, Schema } from "effect"
import { createDas, submitDas } from "../../src/usecases/DasCommands.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { appInput, tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"
import { MemoryStore } from "../support/MemoryStore.js"

const encodeDas = Schema.encodeSync(Das)
const encodeEvent = Schema.encodeSync(ReferentialEvent)

const dasEventsOf = (tenantId: string) =>
  Effect.flatMap(MemoryStore, (memory) =>
    memory.read(tenantId, (state) => state.events.filter((event): event is DasSubmitted => event.type === "das.submitted")))

const problemOf = <A, E extends { readonly errorCode: string; readonly detail: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => ({ errorCode: error.errorCode, detail: error.detail }))

describe("DAS use cases", () => {
  layer(MemoryLayer)((it) => {
    it.effect("creates a DRAFT, then submission makes it SUBMITTED by the caller and announces it with the record", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantA, "APP-DAS", appInput({ name: "Das" }), "ops")
        const content = { context: "A ledger", decisions: [{ id: 1, text: "PostgreSQL" }] }
        const draft = yield* createDas(tenantA, { applicationCode: "APP-DAS", title: "Target architecture", content })
        expect(encodeDas(draft)).toMatchObject({
          applicationCode: "APP-DAS",
          title: "Target architecture",
          content,
          status: "DRAFT",
          submittedBy: null,
          submittedAt: null
        })
        expect(yield* dasEventsOf(tenantA)).toEqual([])

        const submitted = yield* submitDas(tenantA, draft.id, "operator:ana")
        expect(encodeDas(submitted)).toMatchObject({ id: draft.id, content, status: "SUBMITTED", submittedBy: "operator:ana" })
        expect(submitted.submittedAt).not.toBeNull()
        const events = yield* dasEventsOf(tenantA)
        expect(events).toHaveLength(1)
        expect(encodeEvent(events[0]!)).toMatchObject({ type: "das.submitted", tenantId: tenantA, data: encodeDas(submitted) })
        expect(events[0]!.id).not.toBe(draft.id)
      }))

    it.effect("an application may have several DAS; one without content has null content", () =>
      Effect.gen(function*() {
        const first = yield* createDas(tenantA, { applicationCode: "APP-DAS", title: "First" })
        const second = yield* createDas(tenantA, { applicationCode: "APP-DAS", title: "Second", content: null })
        expect(first.id).not.toBe(second.id)
        expect([first.content, second.content]).toEqual([null, null])
      }))

    it.effect("submitting twice is a 409 CONFLICT that writes no second event", () =>
      Effect.gen(function*() {
        const draft = yield* createDas(tenantA, { applicationCode: "APP-DAS", title: "Twice" })
        yield* submitDas(tenantA, draft.id, "ops")
        const before = (yield* dasEventsOf(tenantA)).length
        expect(yield* problemOf(submitDas(tenantA, draft.id, "someone-else"))).toEqual({
          errorCode: "CONFLICT",
          detail: `DAS '${draft.id}' is already submitted.`
        })
        expect((yield* dasEventsOf(tenantA)).length).toBe(before)
        const memory = yield* MemoryStore
        expect(yield* memory.read(tenantA, (state) => state.das.get(draft.id)?.submittedBy)).toBe("ops")
      }))

    it.effect("an unknown application, or another tenant's, is a 404 and creates nothing", () =>
      Effect.gen(function*() {
        const notFound = { errorCode: "NOT_FOUND", detail: "Application 'APP-DAS' does not exist." }
        const memory = yield* MemoryStore
        const countOf = (tenantId: string) => memory.read(tenantId, (state) => state.das.size)
        const inA = yield* countOf(tenantA)
        expect(yield* problemOf(createDas(tenantB, { applicationCode: "APP-DAS", title: "Elsewhere" }))).toEqual(notFound)
        expect(yield* problemOf(createDas(tenantA, { applicationCode: "APP-NONE", title: "Nowhere" }))).toMatchObject({ errorCode: "NOT_FOUND" })
        expect(yield* countOf(tenantB)).toBe(0)
        expect(yield* countOf(tenantA)).toBe(inA)
      }))

    it.effect("another tenant's DAS, or an unknown one, is a 404 and stays a DRAFT", () =>
      Effect.gen(function*() {
        const draft = yield* createDas(tenantA, { applicationCode: "APP-DAS", title: "Mine" })
        expect(yield* problemOf(submitDas(tenantB, draft.id, "ops"))).toEqual({ errorCode: "NOT_FOUND", detail: `DAS '${draft.id}' does not exist.` })
        expect(yield* problemOf(submitDas(tenantA, "99999999-9999-4999-8999-999999999999", "ops"))).toMatchObject({ errorCode: "NOT_FOUND" })
        const memory = yield* MemoryStore
        expect(yield* memory.read(tenantA, (state) => state.das.get(draft.id)?.status)).toBe("DRAFT")
        expect(yield* dasEventsOf(tenantB)).toEqual([])
      }))

    it.effect("content that is not a JSON object, too large or unstorable, and a blank title, are a 400", () =>
      Effect.gen(function*() {
        const refused = (content: unknown, title = "Bad") => problemOf(createDas(tenantA, { applicationCode: "APP-DAS", title, content }))
        for (const content of [[1, 2], "text", 42, true]) {
          const problem = yield* refused(content)
          expect(problem.errorCode).toBe("INVALID_REQUEST")
          expect(problem.detail).toContain("content")
        }
        const large = yield* refused({ text: "x".repeat(DasContentMaxBytes) })
        expect(large).toMatchObject({ errorCode: "INVALID_REQUEST" })
        expect(large.detail).toContain(`at most ${DasContentMaxBytes} bytes`)
        expect((yield* refused({ "a\u0000": 1 })).detail).toContain("U+0000")
        expect((yield* refused({ text: "\ud800" })).detail).toContain("unpaired surrogate")
        expect((yield* refused(undefined, " ")).errorCode).toBe("INVALID_REQUEST")
        // An escaped backslash before "u0000" is text, not a NUL: accepted.
        const fine = yield* createDas(tenantA, { applicationCode: "APP-DAS", title: "Backslash", content: { path: "C:\\u0000" } })
        expect(fine.content).toEqual({ path: "C:\\u0000" })
      }))
  })
})
