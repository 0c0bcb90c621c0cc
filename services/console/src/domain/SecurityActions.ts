/**
 * What the console records in its security log (docs/product-rules.md#security-event-log);
 * provisioning's and the gateway's logs, which it shows beside its own, add theirs.
 */
export type SecurityAction =
  | "sign_in"
  | "sign_in_failed"
  | "sign_in_locked"
  | "sso_sign_in_refused"
  | "sign_out"
  | "csrf_refused"
  | "pat_requested"
  | "pat_request_approved"
  | "pat_request_denied"
  | "pat_revoked"
  | "webhook_created"
  | "webhook_updated"
  | "webhook_enabled"
  | "webhook_disabled"
  | "webhook_secret_rotated"
  | "webhook_redelivered"
  | "webhook_recovered"
  | "member_invited"
  | "invitation_revoked"
  | "member_removed"
  | "partner_client_created"
  | "partner_secret_rotated"
  | "partner_client_enabled"
  | "partner_client_disabled"
