import type { ApiPromise, PagePromise } from "../api-promise.js"
import type { RequestOptions, Transport } from "../transport.js"
import type { Invitation, InvitationCreateParams, Member, PageParams } from "../types.js"

/** Tenant provisioning: invitations and members. Needs a `write` token of a tenant-admin. */
export class Invitations {
  readonly #transport: Transport

  /** @internal Reached through `PortfolioClient.invitations`. */
  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * `POST /tenant/invitations`: invites `email` with the role `arbRole`. A PENDING invitation for the
   * same address (compared case-insensitively) gives a `ConflictError` whose `errorCode` is `ALREADY_INVITED`.
   */
  create(params: InvitationCreateParams, options?: RequestOptions): ApiPromise<Invitation> {
    return this.#transport.request("invitations.createInvitation", { body: { email: params.email, arbRole: params.arbRole } }, options)
  }

  /** `GET /tenant/invitations`: the tenant's invitations, newest first. */
  list(params: PageParams = {}, options?: RequestOptions): PagePromise<Invitation> {
    return this.#transport.list("invitations.listInvitations", { query: { limit: params.limit, cursor: params.cursor } }, options)
  }

  /** `GET /tenant/invitations/members`: the tenant's members, newest first. */
  members(params: PageParams = {}, options?: RequestOptions): PagePromise<Member> {
    return this.#transport.list("invitations.listMembers", { query: { limit: params.limit, cursor: params.cursor } }, options)
  }

  /** `DELETE /tenant/invitations/{id}`: revokes a PENDING invitation (otherwise `ConflictError` `INVITATION_NOT_PENDING`). */
  revoke(id: string, options?: RequestOptions): ApiPromise<void> {
    return this.#transport.request("invitations.revokeInvitation", { path: { id } }, options)
  }

  /** `DELETE /tenant/invitations/members/{userSub}`: removes a member (never the last tenant-admin: `ConflictError` `LAST_TENANT_ADMIN`). */
  removeMember(userSub: string, options?: RequestOptions): ApiPromise<void> {
    return this.#transport.request("invitations.removeMember", { path: { userSub } }, options)
  }
}
