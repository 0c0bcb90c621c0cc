import { type CreatePartnerClientRequest, NotFound, PartnerClientWithSecret, partnerClientIdOf } from "@portfolio/domain"
import { DateTime, Effect, Option } from "effect"
import { generateClientSecret, PartnerClientRecord, publicView } from "../domain/PartnerClient.js"
import { PartnerClientStore } from "../ports/PartnerClientStore.js"

const notFound = (clientId: string) => new NotFound({ detail: `No partner client has the id '${clientId}'.` })

const withSecret = (record: PartnerClientRecord, clientSecret: string) => new PartnerClientWithSecret({ ...publicView(record), clientSecret }, true)

/** Registers a partner of a tenant; its secret is in the answer and nowhere else, ever. */
export const createPartnerClient = Effect.fn("gateway.createPartnerClient")(function*(tenantId: string, request: CreatePartnerClientRequest) {
  const store = yield* PartnerClientStore
  const now = yield* DateTime.now
  const { secret, secretHash } = generateClientSecret()
  const record = new PartnerClientRecord({
    clientId: partnerClientIdOf(request.name),
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
  yield* store.insert(record)
  yield* Effect.logInfo("partner client created", { clientId: record.clientId, tenantId, scope: record.scope })
  return withSecret(record, secret)
})

export const listPartnerClients = Effect.fn("gateway.listPartnerClients")(function*(tenantId: string) {
  const store = yield* PartnerClientStore
  return (yield* store.listByTenant(tenantId)).map(publicView)
})

/**
 * A new secret, answered once; the current one stays valid for `graceSeconds` (none with 0), so
 * that the partner swaps it without a failed token request. The one before that is forgotten.
 */
export const rotatePartnerSecret = Effect.fn("gateway.rotatePartnerSecret")(function*(clientId: string, graceSeconds: number) {
  const store = yield* PartnerClientStore
  const current = yield* store.find(clientId)
  if (Option.isNone(current)) return yield* notFound(clientId)
  const now = yield* DateTime.now
  const { secret, secretHash } = generateClientSecret()
  const previous = graceSeconds === 0 ? null : { secretHash: current.value.secretHash, expiresAt: DateTime.add(now, { seconds: graceSeconds }) }
  const rotated = yield* store.changeSecret(clientId, { secretHash, previous, at: now })
  if (Option.isNone(rotated)) return yield* notFound(clientId)
  yield* Effect.logInfo("partner client secret rotated", { clientId, graceSeconds })
  return withSecret(rotated.value, secret)
})

/**
 * A disabled client gets no new token; the tokens it already holds stay valid until they expire
 * (5 minutes at most), since the gateway verifies them without a round trip.
 */
export const setPartnerClientEnabled = Effect.fn("gateway.setPartnerClientEnabled")(function*(clientId: string, enabled: boolean) {
  const store = yield* PartnerClientStore
  const now = yield* DateTime.now
  const changed = yield* store.setDisabled(clientId, enabled ? null : now, now)
  if (Option.isNone(changed)) return yield* notFound(clientId)
  yield* Effect.logInfo(enabled ? "partner client enabled" : "partner client disabled", { clientId })
  return publicView(changed.value)
})
