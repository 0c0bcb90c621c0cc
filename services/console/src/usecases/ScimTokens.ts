import type { ScimToken } from "@portfolio/domain"
import { Effect } from "effect"
import type { Membership } from "../ports/DirectoryDesk.js"
import { ScimTokenDesk } from "../ports/ScimTokenDesk.js"
import { NotInTenant } from "./Ownership.js"
import { actorOf, type Member, recordSecurityEvent } from "./SignIn.js"

/**
 * The SCIM page's use cases (docs/scim.md, "The SCIM token"): the gateway holds the tokens and
 * their rules. The console records what its members do, since the gateway records only operators'
 * calls; never the token itself.
 */
const logAs = (member: Member, membership: Membership, action: "scim_token_created" | "scim_token_revoked", token: ScimToken) =>
  recordSecurityEvent({
    tenantIds: [membership.tenantId],
    actorSub: member.account.subject,
    actorEmail: member.account.email,
    action,
    target: token.id,
    detail: { label: token.label, tokenPrefix: token.tokenPrefix }
  })

export const scimTokens = (member: Member, membership: Membership) => Effect.flatMap(ScimTokenDesk, (desk) => desk.list(actorOf(member, membership)))

/** One of the member's tenant's tokens; any other id is answered as unknown, before anything changes. */
const ownToken = (member: Member, membership: Membership, id: string) =>
  Effect.gen(function*() {
    const found = (yield* scimTokens(member, membership)).find((t) => t.id === id)
    return found ?? (yield* new NotInTenant())
  })

export const createScimToken = (member: Member, membership: Membership, label: string) =>
  Effect.gen(function*() {
    const created = yield* (yield* ScimTokenDesk).create(actorOf(member, membership), label)
    yield* logAs(member, membership, "scim_token_created", created)
    return created
  })

/** Revoking a revoked token again changes nothing, and records nothing. */
export const revokeScimToken = (member: Member, membership: Membership, id: string) =>
  Effect.gen(function*() {
    const token = yield* ownToken(member, membership, id)
    if (token.revokedAt !== null) return token
    const revoked = yield* (yield* ScimTokenDesk).revoke(actorOf(member, membership), id)
    yield* logAs(member, membership, "scim_token_revoked", revoked)
    return revoked
  })
