import { Email, FailedSignInLookup, type MemberAccount as AccountAnswer, ProvisioningAdminApi, SignInCheckRequest, SsoDomainLookup, SsoSignInCompletion, TenantSlug } from "@portfolio/domain"
import { DateTime, Effect, Layer, Option, Redacted, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import {
  DirectoryDesk,
  type MemberAccount,
  NoSsoConnection,
  ProviderSignInRefused,
  type ProviderSignInStart,
  RemovedMember,
  UpstreamUnavailable
} from "../../ports/DirectoryDesk.js"
import { memberDesk, orNone, securityLogQuery } from "./Upstream.js"

const accountOf = (answer: AccountAnswer): MemberAccount => ({
  subject: answer.subject,
  email: answer.email,
  memberships: answer.memberships.map(({ member, tenant }) => ({ tenantId: tenant.id, tenantSlug: tenant.slug, role: member.arbRole })),
  // A provisioning older than the field leaves it out: no password change to go by, as before.
  passwordSetAtMs: answer.passwordSetAt == null ? null : DateTime.toEpochMillis(answer.passwordSetAt),
  // A provisioning older than the field has no single sign-on to require.
  ssoOnlyTenantIds: answer.ssoOnlyTenantIds ?? []
})

/** What is no e-mail address is no account's: answered without a call, as provisioning would. */
const isEmail = Schema.is(Email)

const isSlug = Schema.is(TenantSlug)
const isCompletion = Schema.is(Schema.Struct(SsoSignInCompletion.fields))
const isStateSchema = Schema.is(SsoSignInCompletion.fields.state)
const isState = (state: string): boolean => isStateSchema(state)

/**
 * The browser is sent where provisioning says and comes back with the state in a cookie: an address
 * that is no http(s) URL, or a state the completion could not carry back, is provisioning's fault.
 */
const startOf = (answer: ProviderSignInStart): Effect.Effect<ProviderSignInStart, UpstreamUnavailable> => {
  const url = URL.canParse(answer.authorizationUrl) ? new URL(answer.authorizationUrl) : undefined
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
    return Effect.fail(new UpstreamUnavailable({ reason: "provisioning answered an authorization URL that is no http(s) URL" }))
  }
  if (!isState(answer.state)) {
    return Effect.fail(new UpstreamUnavailable({ reason: `provisioning answered a state of ${answer.state.length} characters` }))
  }
  return Effect.succeed({ authorizationUrl: answer.authorizationUrl, state: answer.state })
}

type Completion =
  | { readonly _tag: "Account"; readonly account: MemberAccount }
  | NoSsoConnection
  | ProviderSignInRefused
  | RemovedMember

/** Accounts through provisioning's admin API: the console never reads its tables. */
export const DirectoryDeskHttp = Layer.effect(
  DirectoryDesk,
  Effect.gen(function*() {
    const { provisioningAdminUrl } = yield* ConsoleSettings
    const provisioning = yield* memberDesk(ProvisioningAdminApi, provisioningAdminUrl, "provisioningAdmin")
    return DirectoryDesk.of({
      checkSignIn: (email, password) =>
        // What is no e-mail address is no account: refused like a wrong password, without a call.
        !isEmail(email) ? Effect.succeed(Option.none()) : provisioning.outage(email, (p) => p.checkSignIn({ payload: new SignInCheckRequest({ email, password: Redacted.value(password) }) })).pipe(
          Effect.map((check) => Option.map(Option.fromNullishOr(check.account), accountOf))
        ),
      failedSignInTenants: (email) =>
        !isEmail(email) ? Effect.succeed([]) : provisioning.outage(email, (p) => p.findFailedSignInTenants({ payload: new FailedSignInLookup({ email }) })).pipe(
          Effect.map((answer) => answer.tenantIds)
        ),
      ssoTenantsForEmail: (email) =>
        !isEmail(email) ? Effect.succeed([]) : provisioning.outage(email, (p) => p.findSsoTenants({ payload: new SsoDomainLookup({ email }) })).pipe(
          Effect.map((answer) => answer.slugs)
        ),
      account: (subject) => provisioning.outage(subject, (p) => orNone(Effect.map(p.getAccount({ params: { subject } }), accountOf))),
      tenantIdOf: (slug) =>
        // No slug is no tenant's: answered without a call, as provisioning would.
        !isSlug(slug) ? Effect.succeed(Option.none()) : provisioning.outage(`tenant:${slug}`, (p) => orNone(Effect.map(p.getTenant({ params: { slug } }), (tenant) => tenant.id))),
      // Nobody is known yet: the assertion names the tenant's sign-in, for what provisioning records.
      startSsoSignIn: (slug) =>
        provisioning.outage(`sso:${slug}`, (p) => orNone(p.startSsoSignIn({ params: { slug } }))).pipe(
          Effect.flatMap((answer): Effect.Effect<ProviderSignInStart, NoSsoConnection | UpstreamUnavailable> =>
            Option.isNone(answer) ? Effect.fail(new NoSsoConnection()) : startOf(answer.value)
          )
        ),
      completeSsoSignIn: (slug, state, callbackUrl) =>
        // What provisioning's contract would not take is no sign-in of its: refused here, not an outage.
        !isCompletion({ state, callbackUrl })
          ? Effect.fail(new ProviderSignInRefused({ reason: "the state or the callback URL is longer than provisioning takes" }))
          : provisioning.outage(`sso:${slug}`, (p) =>
            p.completeSsoSignIn({ params: { slug }, payload: new SsoSignInCompletion({ state, callbackUrl }) }).pipe(
              Effect.map((answer): Completion => ({ _tag: "Account", account: accountOf(answer) })),
              Effect.catchTags({
                NotFound: () => Effect.succeed<Completion>(new NoSsoConnection()),
                Unauthenticated: (refused) => Effect.succeed<Completion>(new ProviderSignInRefused({ reason: refused.detail })),
                MemberWasRemoved: (removed) => Effect.succeed<Completion>(new RemovedMember({ reason: removed.detail }))
              })
            )).pipe(Effect.flatMap((outcome) => (outcome._tag === "Account" ? Effect.succeed(outcome.account) : Effect.fail(outcome)))),
      securityEvents: (tenantId, page) =>
        provisioning.outage(`tenant:${tenantId}`, (p) => p.listProvisioningSecurityEvents({ params: { tenantId }, query: securityLogQuery(page) }))
    })
  })
)
