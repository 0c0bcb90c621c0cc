import type { Scope } from "@portfolio/domain"
import { Effect } from "effect"
import type { Membership } from "../ports/DirectoryDesk.js"
import { PartnerDesk } from "../ports/PartnerDesk.js"
import { actorOf, type Member, recordSecurityEvent } from "./SignIn.js"
import { NotInTenant } from "./Ownership.js"

/**
 * The partner clients page's use cases (docs/product-rules.md#partner-clients): the gateway holds
 * the clients and their rules. It reaches a client by id whatever its tenant, so a change of one
 * first checks it is among the member's tenant's clients: another's is answered as unknown.
 */
const logAs = (member: Member, membership: Membership, action: "partner_client_created" | "partner_secret_rotated" | "partner_client_enabled" | "partner_client_disabled", target: string, detail: Readonly<Record<string, string | number>> = {}) =>
  recordSecurityEvent({ tenantIds: [membership.tenantId], actorSub: member.account.subject, actorEmail: member.account.email, action, target, detail })

export const partnerClients = (member: Member, membership: Membership) => Effect.flatMap(PartnerDesk, (desk) => desk.list(actorOf(member, membership)))

const ownClient = (member: Member, membership: Membership, clientId: string) =>
  Effect.gen(function*() {
    const clients = yield* partnerClients(member, membership)
    if (!clients.some((c) => c.clientId === clientId)) return yield* new NotInTenant()
  })

export const createPartnerClient = (member: Member, membership: Membership, name: string, scope: Scope) =>
  Effect.gen(function*() {
    const created = yield* (yield* PartnerDesk).create(actorOf(member, membership), name, scope)
    yield* logAs(member, membership, "partner_client_created", created.clientId, { scope })
    return created
  })

export const rotatePartnerSecret = (member: Member, membership: Membership, clientId: string, graceSeconds: number) =>
  Effect.gen(function*() {
    yield* ownClient(member, membership, clientId)
    const rotated = yield* (yield* PartnerDesk).rotateSecret(actorOf(member, membership), clientId, graceSeconds)
    yield* logAs(member, membership, "partner_secret_rotated", clientId, { graceSeconds })
    return rotated
  })

export const setPartnerClientEnabled = (member: Member, membership: Membership, clientId: string, enabled: boolean) =>
  Effect.gen(function*() {
    yield* ownClient(member, membership, clientId)
    const changed = yield* (yield* PartnerDesk).setEnabled(actorOf(member, membership), clientId, enabled)
    yield* logAs(member, membership, enabled ? "partner_client_enabled" : "partner_client_disabled", clientId)
    return changed
  })
