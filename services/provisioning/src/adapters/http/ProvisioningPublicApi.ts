import { HttpApi } from "@effect/platform"
import { asProblem, InvalidRequest, InvitationsGroup, RateLimited, Unavailable } from "@portfolio/domain"

/** The part of the public contract this service answers: the `invitations` group, as the gateway forwards it. */
export class ProvisioningPublicApi extends HttpApi.make("provisioningPublic")
  .add(InvitationsGroup)
  .addError(asProblem(InvalidRequest))
  .addError(asProblem(RateLimited))
  .addError(asProblem(Unavailable)) {}
