import { Conflict, Das, DasInput, DasSubmitted, InvalidRequest, NotFound } from "@portfolio/domain"
import { newId } from "@portfolio/platform/ids"
import { DateTime, Effect, Option, Schema } from "effect"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import { DasRepository } from "../ports/DasRepository.js"
import { ReferentialOutbox } from "../ports/ReferentialOutbox.js"
import { writing } from "./Writing.js"

/**
 * What creates a DAS, checked here against `DasInput` and not only by the HTTP contract, so that
 * whichever adapter drives the use case, the content is an object within the size limit.
 */
export interface CreateDasInput {
  readonly applicationCode: string
  readonly title: string
  readonly content?: unknown
}

const decodeInput = Schema.decodeUnknownEffect(DasInput)
const checked = (input: CreateDasInput) =>
  decodeInput(input, { errors: "all" }).pipe(
    Effect.mapError((error) => new InvalidRequest({ detail: `The DAS is not valid: ${error.message}` }))
  )

const absent = (id: string) => new NotFound({ detail: `DAS '${id}' does not exist.` })

/** Creates a DRAFT DAS of an application of the tenant (docs/product-rules.md#referential). */
export const createDas = Effect.fn("createDas")(function*(tenantId: string, input: CreateDasInput) {
  const { applicationCode, content, title } = yield* checked(input)
  const applications = yield* ApplicationRepository
  const records = yield* DasRepository
  // No scope: no public read shows a DAS (it still takes its turn among the tenant's writers).
  return yield* writing(
    tenantId,
    [],
    () => Effect.gen(function*() {
      if (!(yield* applications.exists(tenantId, applicationCode))) {
        return yield* new NotFound({ detail: `Application '${applicationCode}' does not exist.` })
      }
      const das = new Das({
        id: yield* newId,
        applicationCode,
        title,
        content: content ?? null,
        status: "DRAFT",
        createdAt: yield* DateTime.now,
        submittedBy: null,
        submittedAt: null
      })
      yield* records.insert(tenantId, das)
      return das
    })
  )
})

/**
 * Moves a DRAFT to SUBMITTED, once: a second submission is a 409 and writes nothing. The record
 * and its `das.submitted` event commit together; the tenant's lock, taken by `writing` first,
 * makes two concurrent submissions of one DAS one success and one 409.
 */
export const submitDas = Effect.fn("submitDas")(function*(tenantId: string, id: string, submittedBy: string) {
  const records = yield* DasRepository
  const events = yield* ReferentialOutbox
  // No scope: no public read shows a DAS; the lock is what this write needs of `writing`.
  return yield* writing(
    tenantId,
    [],
    () => Effect.gen(function*() {
      const found = yield* records.find(tenantId, id)
      if (Option.isNone(found)) return yield* absent(id)
      const current = found.value
      if (current.status === "SUBMITTED") return yield* new Conflict({ detail: `DAS '${id}' is already submitted.` })
      const now = yield* DateTime.now
      const submitted = new Das({ ...current, status: "SUBMITTED", submittedBy, submittedAt: now })
      yield* records.update(tenantId, submitted)
      yield* events.append([new DasSubmitted({ id: yield* newId, type: "das.submitted", createdAt: now, tenantId, data: submitted })])
      return submitted
    })
  )
})
