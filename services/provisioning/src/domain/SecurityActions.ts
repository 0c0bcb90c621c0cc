/**
 * What provisioning records in its security log (docs/product-rules.md#security-event-log): the
 * acceptances on its page and the wrong current passwords typed there, the invitations and
 * removals made through its public API or by an operator, and every change a SCIM token makes
 * (docs/scim.md: its Users, and the members and invitations they stand for); the console logs its own.
 */
export type ProvisioningSecurityAction =
  | "invitation_accepted"
  | "invitation_password_refused"
  | "member_invited"
  | "invitation_revoked"
  | "member_removed"
  | "sso_connection_set"
  | "sso_connection_disabled"
  | "sso_domains_confirmed"
  | "member_role_changed"
  | "invitation_role_changed"
  | "scim_user_created"
  | "scim_user_updated"
  | "scim_user_deleted"
