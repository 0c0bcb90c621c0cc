import { Email, type MemberAccount as AccountAnswer, ProvisioningAdminApi } from "@portfolio/domain"
import { DateTime, Effect, Layer, Option, Redacted, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { DirectoryDesk, type MemberAccount } from "../../ports/DirectoryDesk.js"
import { asOutage, memberClients, securityLogQuery } from "./Upstream.js"

const accountOf = (answer: AccountAnswer): MemberAccount => ({
  subject: answer.subject,
  email: answer.email,
  memberships: answer.memberships.map(({ member, tenant }) => ({ tenantId: tenant.id, tenantSlug: tenant.slug, role: member.arbRole })),
  // A provisioning older than the field leaves it out: no password change to go by, as before.
  passwordSetAtMs: answer.passwordSetAt == null ? null : DateTime.toEpochMillis(answer.passwordSetAt)
})

/** What is no e-mail address is no account's: answered without a call, as provisioning would. */
const isEmail = Schema.is(Email)

/** Accounts through provisioning's admin API: the console never reads its tables. */
export const DirectoryDeskHttp = Layer.effect(
  DirectoryDesk,
  Effect.gen(function*() {
    const { provisioningAdminUrl } = yield* ConsoleSettings
    const clients = yield* memberClients(ProvisioningAdminApi, provisioningAdminUrl)
    const provisioning = (who: string) => Effect.map(clients(who), (client) => client.provisioningAdmin)
    return DirectoryDesk.of({
      checkSignIn: (email, password) =>
        // What is no e-mail address is no account: refused like a wrong password, without a call.
        !isEmail(email) ? Effect.succeed(Option.none()) : asOutage(Effect.flatMap(provisioning(email), (p) => p.checkSignIn({ payload: { email, password: Redacted.value(password) } }))).pipe(
          Effect.map((check) => Option.map(Option.fromNullable(check.account), accountOf))
        ),
      failedSignInTenants: (email) =>
        !isEmail(email) ? Effect.succeed([]) : asOutage(Effect.flatMap(provisioning(email), (p) => p.findFailedSignInTenants({ payload: { email } }))).pipe(
          Effect.map((answer) => answer.tenantIds)
        ),
      account: (subject) =>
        Effect.flatMap(provisioning(subject), (p) => p.getAccount({ path: { subject } })).pipe(
          Effect.map((answer) => Option.some(accountOf(answer))),
          Effect.catchTag("NotFound", () => Effect.succeed(Option.none())),
          asOutage
        ),
      securityEvents: (tenantId, page) =>
        asOutage(Effect.flatMap(provisioning(`tenant:${tenantId}`), (p) =>
          p.listProvisioningSecurityEvents({ path: { tenantId }, urlParams: securityLogQuery(page) })))
    })
  })
)
