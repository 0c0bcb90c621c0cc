import { ActorRequest, InviteAsRequest, ProvisioningAdminApi } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { MemberDesk } from "../../ports/MemberDesk.js"
import type { Actor } from "../../ports/TokenDesk.js"
import { memberDesk } from "./Upstream.js"

/**
 * Members and invitations through provisioning's admin API, made as the member: provisioning
 * reads their role from its own records and applies the public endpoints' rules.
 */
export const MemberDeskHttp = Layer.effect(
  MemberDesk,
  Effect.gen(function*() {
    const { provisioningAdminUrl } = yield* ConsoleSettings
    const provisioning = yield* memberDesk(ProvisioningAdminApi, provisioningAdminUrl, "provisioningAdmin")
    const path = (actor: Actor) => ({ tenantId: actor.tenantId })
    return MemberDesk.of({
      members: (actor) => provisioning.outcome(actor.email, (p) => p.listMembersAs({ params: path(actor), query: { actorSub: actor.userSub } })),
      invitations: (actor) => provisioning.outcome(actor.email, (p) => p.listInvitationsAs({ params: path(actor), query: { actorSub: actor.userSub } })),
      invite: (actor, email, arbRole) =>
        provisioning.outcome(actor.email, (p) => p.inviteAs({ params: path(actor), payload: new InviteAsRequest({ actorSub: actor.userSub, email, arbRole }) })),
      revokeInvitation: (actor, id) =>
        provisioning.outcome(actor.email, (p) => p.revokeInvitationAs({ params: { ...path(actor), id }, payload: new ActorRequest({ actorSub: actor.userSub }) })).pipe(Effect.asVoid),
      removeMember: (actor, userSub) =>
        provisioning.outcome(actor.email, (p) => p.removeMemberAs({ params: { ...path(actor), userSub }, payload: new ActorRequest({ actorSub: actor.userSub }) })).pipe(Effect.asVoid)
    })
  })
)
