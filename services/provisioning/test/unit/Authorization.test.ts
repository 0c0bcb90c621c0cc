import { describe, expect, it } from "@effect/vitest"
import type { ApiError, CallerIdentity } from "@portfolio/domain"
import type { ProvisioningOutbox } from "../../src/ports/ProvisioningOutbox.js"
import type { InvitationRepository } from "../../src/ports/InvitationRepository.js"
import type { Mailer } from "../../src/ports/Mailer.js"
import type { MemberRepository } from "../../src/ports/MemberRepository.js"
import type { ScimUserRepository } from "../../src/ports/ScimUserRepository.js"
import type { TenantRepository } from "../../src/ports/TenantRepository.js"
import type { SecurityLog } from "@portfolio/platform/security"
import type { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Redacted, Ref } from "effect"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation, listInvitations, revokeInvitation } from "../../src/usecases/Invitations.js"
import { listMembers, removeMember } from "../../src/usecases/Members.js"
import { adminOf, apiOrigin, invite, pageClient, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"
import type { ProvisioningSettings } from "../../src/Config.js"

type Operation = (caller: CallerIdentity) => Effect.Effect<
  unknown,
  ApiError,
  ProvisioningOutbox | InvitationRepository | Mailer | MemberRepository | ScimUserRepository | SecurityLog | TenantRepository | UnitOfWork | ProvisioningSettings
>

/**
 * The five public operations, each aimed at something that exists, so that only authorization can
 * refuse; made as the public API's door makes them, so that a refusal that recorded anything shows.
 */
const operations = (invitationId: string, userSub: string): Record<string, Operation> => ({
  "POST /tenant/invitations": (caller: CallerIdentity) => createInvitation(caller, invite("new@example.com"), apiOrigin),
  "GET /tenant/invitations": (caller: CallerIdentity) => listInvitations(caller),
  "GET /tenant/invitations/members": (caller: CallerIdentity) => listMembers(caller),
  "DELETE /tenant/invitations/{id}": (caller: CallerIdentity) => revokeInvitation(caller, invitationId, apiOrigin),
  "DELETE /tenant/invitations/members/{userSub}": (caller: CallerIdentity) => removeMember(caller, userSub, apiOrigin)
})

/** The actions of the log, oldest first: here, the two acceptances of `setUp` and nothing else. */
const loggedActions = Effect.map(Effect.flatMap(MemoryStore, Ref.get), (state) => state.securityEvents.map((e) => e.action))

const lastToken = Effect.map(Effect.flatMap(MemoryStore, Ref.get), (state) => tokenOf(state.mail.at(-1)!.text))

/** An acme tenant with its SIGNUP admin, a second tenant-admin and a viewer, all through invitations. */
const setUp = Effect.gen(function*() {
  const { admin, caller, tenant } = yield* tenantWithAdmin("acme")
  const join = (email: string, role: string) =>
    Effect.andThen(createInvitation(caller, invite(email, role)), Effect.flatMap(lastToken, (token) => acceptInvitation(token, Redacted.make("a long enough password"), pageClient)))
  const deputy = yield* join("deputy@example.com", "tenant-admin")
  const viewer = yield* join("viewer@example.com", "viewer")
  const pending = yield* createInvitation(caller, invite("pending@example.com"))
  return { admin, caller, tenant, deputy, viewer, pending }
})

describe("authorization on provisioning's own records", () => {
  it.effect("a caller removed from the tenant gets UNAUTHENTICATED on all five operations, whatever the token claims", () =>
    Effect.gen(function*() {
      const { caller, deputy, pending, tenant, viewer } = yield* setUp
      yield* removeMember(caller, deputy.userSub)
      const removed = adminOf(tenant.id, deputy.userSub)
      for (const [name, run] of Object.entries(operations(pending.id, viewer.userSub))) {
        const refused = yield* Effect.flip(run(removed))
        expect({ name, refused }).toMatchObject({ name, refused: { _tag: "Unauthenticated", errorCode: "UNAUTHENTICATED", detail: "The token has been revoked." } })
      }
      // A subject the tenant never had reads the same.
      expect((yield* Effect.flip(listMembers(adminOf(tenant.id, "never-a-member"))))._tag).toBe("Unauthenticated")
      const state = yield* Ref.get(yield* MemoryStore)
      expect(state.invitations.map((row) => row.record.email)).not.toContain("new@example.com")
      expect(state.invitations.find((row) => row.record.id === pending.id)?.record.revokedAt).toBeNull()
      expect((yield* listMembers(caller)).map((m) => m.userSub)).toContain(viewer.userSub)
      expect(yield* loggedActions).toEqual(["invitation_accepted", "invitation_accepted"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("a token claiming tenant-admin for a member who is not one gets INSUFFICIENT_SCOPE naming the member's role", () =>
    Effect.gen(function*() {
      const { admin, caller, pending, tenant, viewer } = yield* setUp
      const claimed = adminOf(tenant.id, viewer.userSub, "write", "tenant-admin")
      for (const [name, run] of Object.entries(operations(pending.id, admin.userSub))) {
        const refused = yield* Effect.flip(run(claimed))
        expect({ name, refused }).toMatchObject({
          name,
          refused: { _tag: "InsufficientScope", detail: `role 'viewer' does not allow ${name}, which requires the tenant-admin role` }
        })
      }
      expect((yield* listMembers(caller)).map((m) => m.userSub)).toContain(admin.userSub)
      expect((yield* listInvitations(caller)).find((i) => i.id === pending.id)?.status).toBe("PENDING")
      expect(yield* loggedActions).toEqual(["invitation_accepted", "invitation_accepted"])
    }).pipe(Effect.provide(MemoryLayer())))
})
