import { Conflict, type CreatePartnerClientRequest, NotFound, PartnerClientWithSecret, Unavailable, trusted } from "@portfolio/domain"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option } from "effect"
import type { AdminCall } from "../domain/OperatorActions.js"
import { generateClientSecret, newPartnerClientId, PartnerClientRecord, publicView } from "../domain/PartnerClient.js"
import { PartnerClientRepository } from "../ports/PartnerClientRepository.js"
import { recordAction } from "./SecurityLog.js"

const notFound = (clientId: string) => new NotFound({ detail: `No partner client has the id '${clientId}'.` })

const withSecret = (record: PartnerClientRecord, clientSecret: string) => trusted(PartnerClientWithSecret, { ...publicView(record), clientSecret })

/** A second draw of the id's random suffix meeting a taken id again would mean a broken generator. */
const IdDraws = 3

/**
 * Registers a partner of a tenant under a new id; its secret is in the answer and nowhere else,
 * ever. A name another tenant uses is no concern of this one's (docs/security.md, "Partner client ids").
 */
export const createPartnerClient = Effect.fn("gateway.createPartnerClient")(function*(
  tenantId: string,
  request: CreatePartnerClientRequest,
  by: AdminCall
) {
  const store = yield* PartnerClientRepository
  const unitOfWork = yield* UnitOfWork
  const now = yield* DateTime.now
  const { secret, secretHash } = generateClientSecret()
  const register = Effect.suspend(() => {
    const record = new PartnerClientRecord({
      clientId: newPartnerClientId(request.name),
      tenantId,
      name: request.name,
      scope: request.scope,
      secretHash,
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      disabledAt: null,
      createdAt: now,
      updatedAt: now
    })
    return unitOfWork.run(
      Effect.andThen(
        store.insert(record),
        recordAction(by, now, { tenantId, action: "partner_client_created", target: record.clientId, detail: { scope: record.scope } })
      )
    ).pipe(Effect.as(record))
  })
  const record = yield* register.pipe(
    Effect.retry({ times: IdDraws - 1, while: (error) => error._tag === "ClientIdTaken" }),
    Effect.catchTags({
      PartnerNameTaken: ({ name }) => Effect.fail(new Conflict({ detail: `This tenant has a partner client named '${name}' already; choose another name.` })),
      ClientIdTaken: ({ clientId }) =>
        Effect.logError("partner client ids drawn taken again and again", { clientId }).pipe(
          Effect.andThen(Effect.fail(new Unavailable({ detail: "The partner client could not be registered; retry shortly." })))
        )
    })
  )
  yield* Effect.logInfo("partner client created", { clientId: record.clientId, tenantId, scope: record.scope })
  return withSecret(record, secret)
})

export const listPartnerClients = Effect.fn("gateway.listPartnerClients")(function*(tenantId: string) {
  const store = yield* PartnerClientRepository
  return (yield* store.listByTenant(tenantId)).map(publicView)
})

/**
 * A new secret, answered once; the current one stays valid for `graceSeconds` (none with 0), so
 * that the partner swaps it without a failed token request. The one before that is forgotten.
 */
export const rotatePartnerSecret = Effect.fn("gateway.rotatePartnerSecret")(function*(clientId: string, graceSeconds: number, by: AdminCall) {
  const store = yield* PartnerClientRepository
  const unitOfWork = yield* UnitOfWork
  const { secret, secretHash } = generateClientSecret()
  const rotated = yield* unitOfWork.run(
    Effect.gen(function*() {
      const current = yield* store.find(clientId)
      if (Option.isNone(current)) return yield* notFound(clientId)
      const now = yield* DateTime.now
      const previous = graceSeconds === 0 ? null : { secretHash: current.value.secretHash, expiresAt: DateTime.add(now, { seconds: graceSeconds }) }
      const rotated = yield* store.changeSecret(clientId, { secretHash, previous, at: now })
      if (Option.isNone(rotated)) return yield* notFound(clientId)
      yield* recordAction(by, now, { tenantId: rotated.value.tenantId, action: "partner_secret_rotated", target: clientId, detail: { graceSeconds } })
      return rotated.value
    })
  )
  yield* Effect.logInfo("partner client secret rotated", { clientId, graceSeconds })
  return withSecret(rotated, secret)
})

/**
 * A disabled client gets no new token; the tokens it already holds stay valid until they expire
 * (5 minutes at most), since the gateway verifies them without a round trip.
 */
export const setPartnerClientEnabled = Effect.fn("gateway.setPartnerClientEnabled")(function*(clientId: string, enabled: boolean, by: AdminCall) {
  const store = yield* PartnerClientRepository
  const unitOfWork = yield* UnitOfWork
  const now = yield* DateTime.now
  const changed = yield* unitOfWork.run(
    Effect.gen(function*() {
      const changed = yield* store.setDisabled(clientId, enabled ? null : now, now)
      if (Option.isNone(changed)) return yield* notFound(clientId)
      const action = enabled ? "partner_client_enabled" : "partner_client_disabled"
      yield* recordAction(by, now, { tenantId: changed.value.tenantId, action, target: clientId })
      return changed.value
    })
  )
  yield* Effect.logInfo(enabled ? "partner client enabled" : "partner client disabled", { clientId })
  return publicView(changed)
})
