import { FailedSignInTenants, MemberAccount, NotFound, SignInCheck, TenantMember } from "@portfolio/domain"
import { type Account, IdentityProvider } from "../ports/IdentityProvider.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { SsoConnectionRepository } from "../ports/SsoConnectionRepository.js"
import { TenantRepository } from "../ports/TenantRepository.js"
import { Effect, Option, type Redacted } from "effect"
import { identityOutage } from "./IdentityOutage.js"

/** An account with its active memberships, one per tenant, ordered by the tenant's slug. */
const memberAccount = (account: Account) =>
  Effect.gen(function*() {
    const members = yield* MemberRepository
    const tenants = yield* TenantRepository
    const records = yield* members.listActiveByUserSub(account.subject)
    const memberships = yield* Effect.forEach(records, ({ member, tenantId }) =>
      // A membership's tenant is never deleted (a foreign key): none would be a broken store, not an answer.
      tenants.findById(tenantId).pipe(
        Effect.flatMap(Effect.fromOption(() => new Error(`membership of ${account.subject} in a tenant that does not exist: ${tenantId}`))),
        Effect.orDie,
        Effect.map((tenant) => new TenantMember({ tenant, member }))
      ))
    const connections = yield* SsoConnectionRepository
    const email = account.email.toLowerCase()
    const ssoOnly = yield* Effect.filter(records, ({ tenantId }) =>
      Effect.map(connections.find(tenantId), Option.exists((connection) => connection.required && !connection.breakGlass.includes(email))))
    return new MemberAccount({
      subject: account.subject,
      email: account.email,
      passwordSetAt: account.passwordSetAt,
      memberships: [...memberships].sort((a, b) => (a.tenant.slug < b.tenant.slug ? -1 : a.tenant.slug > b.tenant.slug ? 1 : 0)),
      ssoOnlyTenantIds: ssoOnly.map(({ tenantId }) => tenantId)
    })
  })

/**
 * The console's sign-in with the built-in identity provider: the account of this e-mail (compared
 * case-insensitively) with its active memberships when the password is the account's; a null
 * account otherwise. An unknown e-mail, an account whose owner never set a password and a wrong
 * password are one answer, at one cost (the provider's), so that neither tells a caller which
 * e-mails have accounts. Nothing is recorded: limiting attempts is the caller's business.
 */
export const checkSignIn = Effect.fn("checkSignIn")(function*(email: string, password: Redacted.Redacted<string>) {
  const identity = yield* IdentityProvider
  const account = yield* identity.verifyPassword(email.trim(), password).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
  if (account._tag === "None") return new SignInCheck({ account: null })
  return new SignInCheck({ account: yield* memberAccount(account.value) })
})

/**
 * The account of this subject with its active memberships and when its password was last set,
 * read again by the console on each page, so that a removed membership stops counting from the
 * next page on, and a session opened before the password was set ends.
 */
export const getAccount = Effect.fn("getAccount")(function*(subject: string) {
  const identity = yield* IdentityProvider
  const account = yield* identity.findAccount(subject).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
  if (account._tag === "None") return yield* new NotFound({ detail: "No account with this subject." })
  return yield* memberAccount(account.value)
})

/**
 * The tenants of the account of an e-mail whose console sign-in failed or was locked out, for the
 * console to file the event in their security logs (docs/product-rules.md#security-event-log):
 * none for an unknown e-mail. Asked by the console after it refused the sign-in, never by a browser.
 */
export const findFailedSignInTenants = Effect.fn("findFailedSignInTenants")(function*(email: string) {
  const identity = yield* IdentityProvider
  const account = yield* identity.findAccountByEmail(email.trim()).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
  if (account._tag === "None") return new FailedSignInTenants({ tenantIds: [] })
  const records = yield* (yield* MemberRepository).listActiveByUserSub(account.value.subject)
  return new FailedSignInTenants({ tenantIds: records.map((record) => record.tenantId) })
})
