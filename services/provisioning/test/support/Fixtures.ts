import { type ArbRole, CallerIdentity, CreateTenantRequest, InvitationRequest, type Scope } from "@portfolio/domain"
import { Effect, Option } from "effect"
import { MailArchive } from "../../src/ports/MailArchive.js"
import { createTenant } from "../../src/usecases/Tenants.js"

export const adminOf = (tenantId: string, subject: string, scope: Scope = "write", role: ArbRole = "tenant-admin") =>
  new CallerIdentity({ tenantId, subject, role, scope })

/** The subject of the operator's assertion in these tests, as the CLI signs it: `operator:<os user>`. */
export const TestOperator = "operator:test-user"

/**
 * A tenant with its SIGNUP admin, and a write-scoped caller acting as that admin; `welcome` is the
 * link mailed to that admin when their account had no password.
 */
export const tenantWithAdmin = (slug: string, adminEmail = `admin@${slug}.test`) =>
  Effect.map(createTenant(new CreateTenantRequest({ slug, adminEmail }), TestOperator), ({ admin, tenant, welcome }) => ({
    tenant,
    admin,
    welcome: welcome ?? null,
    caller: adminOf(tenant.id, admin.userSub)
  }))

export const invite = (email: string, arbRole: string = "architect") => new InvitationRequest({ email, arbRole })

/** Where the use-case tests' acceptances come from, as the acceptance page would tell it. */
export const pageClient = { ip: "203.0.113.7", userAgent: "Mozilla/5.0 (test)" }

/** Where the use-case tests' public API calls come from, as the gateway's forwarded request would tell it. */
export const apiOrigin = { ip: "198.51.100.23", userAgent: "curl/8.7.1" }

/** The token at the end of the magic link of a mail body. */
export const tokenOf = (text: string) => {
  const match = /\/accept\/([A-Za-z0-9_-]{43})\b/.exec(text)
  if (match?.[1] === undefined) throw new Error(`no magic link in: ${text}`)
  return match[1]
}

/** The text of the newest mail to `email`, as the operator reads it (the archive opens what the table keeps sealed). */
export const lastMailTo = (email: string) =>
  Effect.flatMap(MailArchive, (archive) => archive.list(Option.some(email), 1)).pipe(
    Effect.flatMap((mail) => mail[0] === undefined ? Effect.die(new Error(`no mail to ${email}`)) : Effect.succeed(mail[0].text))
  )
