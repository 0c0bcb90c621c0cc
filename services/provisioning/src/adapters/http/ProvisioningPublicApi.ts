import { HttpApi } from "effect/http-api"
import { InvitationsGroup, PublicProblems } from "@portfolio/domain"

/** The part of the public contract this service answers: the `invitations` group, as the gateway forwards it. */
export class ProvisioningPublicApi extends HttpApi.make("provisioningPublic")
  .add(InvitationsGroup)
  .middleware(PublicProblems) {}
