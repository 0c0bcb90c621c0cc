import { HttpApiBuilder } from "effect/http-api"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { Caller, type CallerIdentity } from "@portfolio/domain"
import { Effect } from "effect"
import { wholeOrPage } from "@portfolio/platform/http"
import { createInvitation, invitationRetry, listInvitations, listInvitationsPage, revokeInvitation } from "../../usecases/Invitations.js"
import { listMembers, listMembersPage, removeMember } from "../../usecases/Members.js"
import { ProvisioningPublicApi } from "./ProvisioningPublicApi.js"
import { publicOrigin } from "./RequestOrigin.js"

/** A 429 tells when to come back, as every 429 of the platform does (the console's `inviteAs` included). */
export const announceRetry = (caller: CallerIdentity) =>
  Effect.gen(function*() {
    const retry = yield* invitationRetry(caller.tenantId)
    // The gateway passes an upstream 429's own X-RateLimit-* through: they describe this limit.
    yield* HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, {
        "retry-after": String(retry.retryAfterSeconds),
        "x-ratelimit-reset": String(retry.resetEpochSeconds),
        "x-ratelimit-limit": String(retry.limit),
        "x-ratelimit-remaining": "0"
      })))
  })

/** The caller, and the origin its changes are recorded with in provisioning's security log. */
const callerAndOrigin = Effect.all([Caller, publicOrigin])

export const PublicHandlersLive = HttpApiBuilder.group(ProvisioningPublicApi, "invitations", (handlers) =>
  handlers
    .handle("createInvitation", ({ payload }) =>
      Effect.flatMap(callerAndOrigin, ([caller, origin]) =>
        createInvitation(caller, payload, origin).pipe(Effect.tapErrorTag("RateLimited", () => announceRetry(caller)))))
    .handle("listInvitations", ({ query }) =>
      Effect.flatMap(Caller, (caller) => wholeOrPage(query, () => listInvitations(caller), () => listInvitationsPage(caller, query))))
    .handle("listMembers", ({ query }) =>
      Effect.flatMap(Caller, (caller) => wholeOrPage(query, () => listMembers(caller), () => listMembersPage(caller, query))))
    .handle("revokeInvitation", ({ params }) => Effect.flatMap(callerAndOrigin, ([caller, origin]) => revokeInvitation(caller, params.id, origin)))
    .handle("removeMember", ({ params }) => Effect.flatMap(callerAndOrigin, ([caller, origin]) => removeMember(caller, params.userSub, origin))))
