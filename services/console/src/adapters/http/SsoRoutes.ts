import { ArbRole, Email, IssuerUrl, SsoConnectionRequest, SsoDomain } from "@portfolio/domain"
import { Effect, Result, Option, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Member } from "../../usecases/SignIn.js"
import { disableTenantSsoConnection, setTenantSsoConnection, tenantSsoConnection } from "../../usecases/SingleSignOn.js"
import { firstField } from "./FormMessages.js"
import { adminOnly, noticeFrom, postedForm, redirect } from "./Guards.js"
import { messagePage } from "./Pages.js"
import { type SsoForm, ssoPage } from "./SsoPages.js"

const notices = {
  saved: "Saved: the next sign-in through the provider uses this connection.",
  disabled: "Single sign-on is disabled: the connection and its secret are deleted, and members sign in with passwords again."
} as const
const noticeOf = noticeFrom(notices)

// Every field may be missing: a form that lacks one is answered with what to give, not as unreadable.
const text = Schema.String.pipe(Schema.withDecodingDefaultKey(Effect.succeed("")))
const RawForm = Schema.Struct({
  issuer: text,
  clientId: text,
  clientSecret: text,
  domains: text,
  defaultRole: text,
  roleClaim: text,
  roleMap: text,
  required: Schema.optional(Schema.String),
  breakGlass: text,
  emailVerifiedClaim: text
})

const asForm = (raw: typeof RawForm.Type): SsoForm => ({
  issuer: raw.issuer.trim(),
  clientId: raw.clientId.trim(),
  domains: raw.domains,
  defaultRole: raw.defaultRole,
  roleClaim: raw.roleClaim.trim(),
  roleMap: raw.roleMap,
  // A checkbox is sent when ticked only.
  required: raw.required !== undefined,
  breakGlass: raw.breakGlass,
  emailVerifiedClaim: raw.emailVerifiedClaim.trim()
})

const listOf = (typed: string) => typed.split(/[\s,;]+/).filter((item) => item !== "")

const isIssuer = Schema.is(IssuerUrl)
const isDomain = Schema.is(SsoDomain)
const isEmail = Schema.is(Email)
const isRole = Schema.is(ArbRole)
const roles = ArbRole.literals.join(", ")

/** What the final decoding refused, by field: its message could quote the value, the client secret included. */
const fieldNames: Readonly<Record<string, string>> = {
  issuer: "issuer",
  clientId: "client id",
  clientSecret: "client secret",
  domains: "e-mail domains",
  defaultRole: "default role",
  roleClaim: "role claim",
  roleMap: "role map",
  breakGlass: "break-glass accounts",
  emailVerifiedClaim: "e-mail verified claim"
}

/**
 * The connection the form asks for, or what to correct in it, in words an admin reads. What the
 * console can tell alone is told here; what needs the provider or the tenant's members (the issuer's
 * discovery, the break-glass accounts being admins) is provisioning's 400.
 */
const requestOf = (form: SsoForm, secret: string): Result.Result<SsoConnectionRequest, string> => {
  if (form.issuer === "") return Result.fail("Give the issuer: your provider's address, such as https://login.example.com.")
  if (!isIssuer(form.issuer)) return Result.fail("The issuer is a URL of at most 2,048 characters, on one line.")
  if (form.clientId === "") return Result.fail("Give the client id your provider gave the console's client.")
  if (secret === "") return Result.fail("Give the client secret: it is asked at every save, since it is never shown again.")
  if (secret.length > 1024) return Result.fail("The client secret is at most 1,024 characters.")
  const domains = listOf(form.domains.toLowerCase())
  if (domains.length === 0) return Result.fail("Give at least one e-mail domain, such as example.com: only people whose e-mail is in one of them can sign in.")
  const badDomain = domains.find((domain) => !isDomain(domain))
  if (badDomain !== undefined) return Result.fail(`'${badDomain}' is not an e-mail domain such as example.com.`)
  if (domains.length > 50) return Result.fail("At most 50 e-mail domains.")
  if (!isRole(form.defaultRole)) return Result.fail(`The default role is one of ${roles}.`)
  const roleMap: Array<{ readonly value: string; readonly role: ArbRole }> = []
  for (const [index, line] of form.roleMap.split(/\r?\n/).entries()) {
    if (line.trim() === "") continue
    // The last '=': a claim's value may hold one (a directory group such as CN=EA Team,OU=Groups), a role never does.
    const at = line.lastIndexOf("=")
    const [value, role] = at === -1 ? [line.trim(), ""] : [line.slice(0, at).trim(), line.slice(at + 1).trim()]
    if (at === -1 || value === "") return Result.fail(`Line ${index + 1} of the role map is not value=role.`)
    if (!isRole(role)) return Result.fail(`Line ${index + 1} of the role map: '${role}' is not a role (${roles}).`)
    roleMap.push({ value, role })
  }
  if (roleMap.length > 100) return Result.fail("At most 100 lines in the role map.")
  const breakGlass = listOf(form.breakGlass)
  const badEmail = breakGlass.find((email) => !isEmail(email))
  if (badEmail !== undefined) return Result.fail(`'${badEmail}' is not an e-mail address.`)
  if (breakGlass.length > 20) return Result.fail("At most 20 break-glass accounts.")
  const decoded = Schema.decodeUnknownResult(SsoConnectionRequest)({
    issuer: form.issuer,
    clientId: form.clientId,
    clientSecret: secret,
    domains,
    defaultRole: form.defaultRole,
    roleClaim: form.roleClaim === "" ? null : form.roleClaim,
    roleMap,
    required: form.required,
    breakGlass,
    ...(form.emailVerifiedClaim === "" ? {} : { emailVerifiedClaim: form.emailVerifiedClaim })
  })
  return Result.mapError(decoded, (error) => {
    const field = firstField(error)
    return field === "roleClaim" || field === "emailVerifiedClaim"
      ? `The ${fieldNames[field]} is the name of a claim of the id token, such as groups: letters, digits, '_', '.', ':' and '-', at most 100.`
      : `The ${fieldNames[field] ?? "form"} cannot be accepted: check it for characters that are not text.`
  })
}

const redirectUriOf = (slug: string) => Effect.map(ConsoleSettings, ({ consoleUrl }) => `${consoleUrl.href.replace(/\/+$/, "")}/sso/${encodeURIComponent(slug)}/callback`)

const view = (
  member: Member,
  membership: Membership,
  extra: { readonly notice?: string; readonly error?: string; readonly status?: number; readonly form?: SsoForm } = {}
) =>
  Effect.gen(function*() {
    const connection = yield* tenantSsoConnection(member, membership)
    return ssoPage(member, membership, member.session.csrfToken, { connection: Option.getOrUndefined(connection), redirectUri: yield* redirectUriOf(membership.tenantSlug), ...extra })
  }).pipe(
    // Provisioning no longer takes the member for a tenant-admin (demoted since this page's check): its words.
    Effect.catchTag("Refused", (e) => Effect.succeed(messagePage(e.status, "Single sign-on", e.detail, { member, membership, csrf: member.session.csrfToken })))
  )

/** The single sign-on page of tenant-admins (docs/console.md). */
export const ssoRoutes = {
  show: adminOnly((member, membership) => Effect.flatMap(noticeOf, (notice) => view(member, membership, notice))),

  save: adminOnly((member, membership) =>
    postedForm(member, RawForm, (raw) =>
      Effect.gen(function*() {
        if (Result.isFailure(raw)) return yield* view(member, membership, { error: "The form could not be read: open the page again.", status: 400 })
        const form = asForm(raw.success)
        // Trimmed: a secret pasted with a space or a line break around it would fail every sign-in later, far from here.
        const request = requestOf(form, raw.success.clientSecret.trim())
        if (Result.isFailure(request)) return yield* view(member, membership, { error: request.failure, status: 400, form })
        return yield* setTenantSsoConnection(member, membership, request.success).pipe(
          Effect.as(redirect("/console/admin/sso?notice=saved")),
          Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status, form }))
        )
      }))),

  disable: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({}), () =>
      disableTenantSsoConnection(member, membership).pipe(
        Effect.as(redirect("/console/admin/sso?notice=disabled")),
        Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status }))
      )))
}
