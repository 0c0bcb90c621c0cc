import { Conflict, type FunctionInput, NotFound } from "@portfolio/domain"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import type { FunctionFields } from "../domain/FunctionRecord.js"
import { FunctionRepository } from "../ports/FunctionRepository.js"
import { DateTime, Effect, Option } from "effect"
import { toBusinessFunction } from "../domain/FunctionForest.js"
import { newId } from "@portfolio/platform/ids"
import { applicationNotFound } from "./ApplicationQueries.js"
import { functionNotFound } from "./FunctionQueries.js"
import { writing } from "./Writing.js"

const existingFunction = Effect.fn("existingFunction")(function*(tenantId: string, id: string) {
  const functions = yield* FunctionRepository
  const found = yield* functions.find(tenantId, id)
  if (Option.isNone(found)) return yield* functionNotFound(id)
  return found.value
})

const checkCodeFree = Effect.fn("checkFunctionCodeFree")(function*(tenantId: string, code: string, ownId: string | null) {
  const functions = yield* FunctionRepository
  const holder = yield* functions.findByCode(tenantId, code)
  if (Option.isSome(holder) && holder.value.id !== ownId) {
    return yield* new Conflict({ detail: `A business function with code '${code}' already exists.` })
  }
})

/** The parent must exist in the tenant, and must be neither the function nor one of its descendants. */
const checkParent = Effect.fn("checkParentFunction")(function*(tenantId: string, id: string | null, parentId: string | null) {
  if (parentId === null) return
  const functions = yield* FunctionRepository
  if (parentId === id) return yield* new Conflict({ detail: `Business function '${id}' cannot be its own parent.` })
  if (Option.isNone(yield* functions.find(tenantId, parentId))) {
    return yield* new NotFound({ detail: `Parent business function '${parentId}' does not exist.` })
  }
  if (id !== null && (yield* functions.selfAndAncestorIds(tenantId, parentId)).includes(id)) {
    return yield* new Conflict({ detail: `Business function '${id}' cannot move under its own descendant '${parentId}'.` })
  }
})

/** Writes the fields, then reads the function back with its path as stored. */
const save = Effect.fn("saveFunction")(function*(tenantId: string, fields: FunctionFields, creating: boolean) {
  const functions = yield* FunctionRepository
  yield* creating ? functions.insert(tenantId, fields) : functions.update(tenantId, fields)
  return toBusinessFunction(yield* existingFunction(tenantId, fields.id))
})

/**
 * The writes of functions and links move the `functions` scope only: no application read shows a
 * function, and a link names its application by a code that never changes. A creation, an update
 * or a move always writes (its `updatedAt` at least); a link or an unlink may find nothing to do.
 */
const Functions = ["functions"] as const

export const createFunction = Effect.fn("createFunction")(function*(tenantId: string, input: FunctionInput) {
  return yield* writing(
    tenantId,
    Functions,
    () => Effect.gen(function*() {
      const parentId = input.parentId ?? null
      yield* checkCodeFree(tenantId, input.code, null)
      yield* checkParent(tenantId, null, parentId)
      const now = yield* DateTime.now
      const fields = { id: yield* newId, code: input.code, name: input.name, description: input.description ?? null, parentId, createdAt: now, updatedAt: now }
      return yield* save(tenantId, fields, true)
    })
  )
})

/** Absent `description` and `parentId` keep their value; null clears them (null parent: a root). */
export const updateFunction = Effect.fn("updateFunction")(function*(tenantId: string, id: string, input: FunctionInput) {
  return yield* writing(
    tenantId,
    Functions,
    () => Effect.gen(function*() {
      const current = yield* existingFunction(tenantId, id)
      const parentId = input.parentId !== undefined ? input.parentId : current.parentId
      if (input.code !== current.code) yield* checkCodeFree(tenantId, input.code, id)
      if (parentId !== current.parentId) yield* checkParent(tenantId, id, parentId)
      const fields = {
        id,
        code: input.code,
        name: input.name,
        description: input.description !== undefined ? input.description : current.description,
        parentId,
        createdAt: current.createdAt,
        updatedAt: yield* DateTime.now
      }
      return yield* save(tenantId, fields, false)
    })
  )
})

export const moveFunction = Effect.fn("moveFunction")(function*(tenantId: string, id: string, parentId: string | null) {
  return yield* writing(
    tenantId,
    Functions,
    () => Effect.gen(function*() {
      const current = yield* existingFunction(tenantId, id)
      yield* checkParent(tenantId, id, parentId)
      const { applicationCodes: _codes, path: _path, ...fields } = current
      return yield* save(tenantId, { ...fields, parentId, updatedAt: yield* DateTime.now }, false)
    })
  )
})

/** Only a leaf can go; its links to applications go with it. */
export const deleteFunction = Effect.fn("deleteFunction")(function*(tenantId: string, id: string) {
  const functions = yield* FunctionRepository
  yield* writing(
    tenantId,
    Functions,
    () => Effect.gen(function*() {
      yield* existingFunction(tenantId, id)
      if (yield* functions.hasChildren(tenantId, id)) {
        return yield* new Conflict({ detail: `Business function '${id}' has children; move or delete them first.` })
      }
      yield* functions.remove(tenantId, id)
    })
  )
})

const changeLink = (name: string, linked: boolean) =>
  Effect.fn(name)(function*(tenantId: string, id: string, applicationCode: string) {
    const functions = yield* FunctionRepository
    const applications = yield* ApplicationRepository
    yield* writing(
      tenantId,
      Functions,
      (unchanged) => Effect.gen(function*() {
        const current = yield* existingFunction(tenantId, id)
        if (!(yield* applications.exists(tenantId, applicationCode))) return yield* applicationNotFound(applicationCode)
        // Read under the tenant's lock: the previous writer's link or unlink is in it.
        if (current.applicationCodes.includes(applicationCode) === linked) return yield* unchanged
        const link = { functionId: id, applicationCode }
        yield* linked ? functions.link(tenantId, link) : functions.unlink(tenantId, link)
      })
    )
  })

/** Idempotent: linking an already linked application changes nothing, and moves no revision. */
export const linkApplication = changeLink("linkApplication", true)
/** Idempotent: unlinking an application that is not linked changes nothing, and moves no revision. */
export const unlinkApplication = changeLink("unlinkApplication", false)
