import { FetchHttpClient } from "effect/http"
import { InternalSecret } from "@portfolio/platform/security"
import { ConfigProvider, Effect, Layer, Option, Redacted, Result } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { freePort } from "@portfolio/platform/testing"
import { DirectoryDeskHttp } from "../../services/console/src/adapters/admin-apis/DirectoryDeskHttp.js"
import { GatewayLogDeskHttp } from "../../services/console/src/adapters/admin-apis/GatewayLogDeskHttp.js"
import { MemberDeskHttp } from "../../services/console/src/adapters/admin-apis/MemberDeskHttp.js"
import { PartnerDeskHttp } from "../../services/console/src/adapters/admin-apis/PartnerDeskHttp.js"
import { ScimTokenDeskHttp } from "../../services/console/src/adapters/admin-apis/ScimTokenDeskHttp.js"
import { TokenDeskHttp } from "../../services/console/src/adapters/admin-apis/TokenDeskHttp.js"
import { WebhookDeskHttp } from "../../services/console/src/adapters/admin-apis/WebhookDeskHttp.js"
import { ConsoleSettings } from "../../services/console/src/Config.js"
import { DirectoryDesk } from "../../services/console/src/ports/DirectoryDesk.js"
import { GatewayLogDesk } from "../../services/console/src/ports/GatewayLogDesk.js"
import { MemberDesk } from "../../services/console/src/ports/MemberDesk.js"
import { PartnerDesk } from "../../services/console/src/ports/PartnerDesk.js"
import { ScimTokenDesk } from "../../services/console/src/ports/ScimTokenDesk.js"
import { type Actor, TokenDesk } from "../../services/console/src/ports/TokenDesk.js"
import { WebhookDesk } from "../../services/console/src/ports/WebhookDesk.js"
import { ssoMember } from "../support/provisioning.js"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

// The console's adapters to the other services' admin APIs, against the real services: what each
// port method answers, a 4xx of the service as `Refused` with its status and words, and a service
// that does not answer as `UpstreamUnavailable` (the pages' tests run over these ports in memory).
const system = useSharedSystem()

let tenant: CreatedTenant
let admin: Actor
const none = "00000000-0000-4000-8000-000000000000"

const adapters = (urls: { readonly gateway: string; readonly provisioning: string; readonly webhook: string }) =>
  Layer.mergeAll(DirectoryDeskHttp, TokenDeskHttp, WebhookDeskHttp, MemberDeskHttp, PartnerDeskHttp, ScimTokenDeskHttp, GatewayLogDeskHttp).pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(ConsoleSettings.layer),
    Layer.provide(Layer.succeed(InternalSecret, system.env["INTERNAL_SECRET"]!)),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({
      GATEWAY_ADMIN_URL: urls.gateway,
      PROVISIONING_ADMIN_URL: urls.provisioning,
      WEBHOOK_ADMIN_URL: urls.webhook
    })))
  )

const live = () => adapters({ gateway: system.system.adminUrls.gateway, provisioning: system.system.adminUrls.provisioning, webhook: system.system.adminUrls["webhook-dispatcher"] })

const run = <A, E>(effect: Effect.Effect<A, E, DirectoryDesk | TokenDesk | WebhookDesk | MemberDesk | PartnerDesk | ScimTokenDesk | GatewayLogDesk>, layer = live()) =>
  Effect.runPromise(Effect.result(Effect.provide(effect, layer)))

const right = async <A, E>(effect: Effect.Effect<A, E, DirectoryDesk | TokenDesk | WebhookDesk | MemberDesk | PartnerDesk | ScimTokenDesk | GatewayLogDesk>) => {
  const result = await run(effect)
  if (Result.isFailure(result)) throw new Error(`expected an answer, got ${JSON.stringify(result.failure)}`)
  return result.success
}

const refusal = async <A, E>(effect: Effect.Effect<A, E, DirectoryDesk | TokenDesk | WebhookDesk | MemberDesk | PartnerDesk | ScimTokenDesk | GatewayLogDesk>) => {
  const result = await run(effect)
  if (Result.isSuccess(result)) throw new Error(`expected a refusal, got ${JSON.stringify(result.success)}`)
  return result.failure as { readonly _tag: string; readonly status?: number; readonly detail?: string }
}

beforeAll(async () => {
  tenant = await system.createTenant("bb-adapters")
  admin = { tenantId: tenant.id, userSub: tenant.adminSub, email: tenant.adminEmail, role: "tenant-admin" }
}, 60_000)

describe("the console's adapters to the admin APIs, against the running services", () => {
  it("DirectoryDesk: accounts, sign-in checks, the tenants of a failed sign-in and provisioning's log", async () => {
    // The admin never set a password: no account, as for a wrong one.
    expect(await right(Effect.flatMap(DirectoryDesk, (d) => d.checkSignIn(tenant.adminEmail, Redacted.make("not the password at all"))))).toEqual(Option.none())
    expect(await right(Effect.flatMap(DirectoryDesk, (d) => d.failedSignInTenants(tenant.adminEmail.toUpperCase())))).toEqual([tenant.id])
    expect(await right(Effect.flatMap(DirectoryDesk, (d) => d.failedSignInTenants("nobody@bb-adapters.example")))).toEqual([])
    // Not an e-mail: no account, without a call.
    expect(await right(Effect.flatMap(DirectoryDesk, (d) => d.failedSignInTenants("nobody")))).toEqual([])
    const account = await right(Effect.flatMap(DirectoryDesk, (d) => d.account(tenant.adminSub)))
    expect(Option.map(account, (a) => a.memberships)).toEqual(Option.some([{ tenantId: tenant.id, tenantSlug: "bb-adapters", role: "tenant-admin" }]))
    expect(await right(Effect.flatMap(DirectoryDesk, (d) => d.account(none)))).toEqual(Option.none())
    // The tenant's creation mailed its admin a welcome link, which provisioning logged.
    const events = await right(Effect.flatMap(DirectoryDesk, (d) => d.securityEvents(tenant.id, { limit: 10 })))
    expect(events.map((e) => [e.tenantId, e.action])).toContainEqual([tenant.id, "member_invited"])
  })

  it("MemberDesk: members and invitations as the member named, provisioning's rules answering 4xx as Refused", async () => {
    const members = await right(Effect.flatMap(MemberDesk, (m) => m.members(admin)))
    expect(members.map((m) => m.userEmail)).toEqual([tenant.adminEmail])
    const invitation = await right(Effect.flatMap(MemberDesk, (m) => m.invite(admin, "new@bb-adapters.example", "viewer")))
    expect(invitation).toMatchObject({ email: "new@bb-adapters.example", arbRole: "viewer", status: "PENDING" })
    expect((await right(Effect.flatMap(MemberDesk, (m) => m.invitations(admin)))).map((i) => i.id)).toContain(invitation.id)
    await right(Effect.flatMap(MemberDesk, (m) => m.revokeInvitation(admin, invitation.id)))
    expect(await refusal(Effect.flatMap(MemberDesk, (m) => m.revokeInvitation(admin, invitation.id)))).toMatchObject({ _tag: "Refused", status: 409 })
    expect(await refusal(Effect.flatMap(MemberDesk, (m) => m.removeMember(admin, "sub-nobody")))).toMatchObject({ _tag: "Refused", status: 404 })
    // Someone who is no member of the tenant is refused whatever the console claims of them.
    const stranger: Actor = { ...admin, userSub: "sub-stranger", email: "stranger@bb-adapters.example" }
    expect((await refusal(Effect.flatMap(MemberDesk, (m) => m.members(stranger))))._tag).toBe("Refused")
  })

  it("TokenDesk: a member's request filed, listed, approved by the admin into a token the member lists and revokes; another denied", async () => {
    const developer = await ssoMember(system, tenant, "sso|bb-adapters-dev", "dev@bb-adapters.example", "architect")
    const dev: Actor = { tenantId: tenant.id, userSub: developer.userSub, email: "dev@bb-adapters.example", role: "architect" }
    const filed = await right(Effect.flatMap(TokenDesk, (t) => t.file(dev, { scope: "read", days: 7, justification: "Reads the referential for the adapter test." })))
    expect(filed).toMatchObject({ status: "pending", scope: "read" })
    const page = await right(Effect.flatMap(TokenDesk, (t) => t.requests(admin, { status: "pending" })))
    expect(page.items.map((r) => r.id)).toContain(filed.id)
    // The gateway's own rules, in its words: no one decides their own request.
    const own = await right(Effect.flatMap(TokenDesk, (t) => t.file(admin, { scope: "read", days: 1, justification: "The admin's own request, for the adapter test." })))
    expect(await refusal(Effect.flatMap(TokenDesk, (t) => t.approve(admin, own.id)))).toMatchObject({ _tag: "Refused", status: 403 })
    const approved = await right(Effect.flatMap(TokenDesk, (t) => t.approve(admin, filed.id)))
    expect(approved.pat.token).toMatch(/^ap_pat_/)
    expect(await refusal(Effect.flatMap(TokenDesk, (t) => t.approve(admin, filed.id)))).toMatchObject({ _tag: "Refused", status: 409 })
    const tokens = await right(Effect.flatMap(TokenDesk, (t) => t.tokens(dev)))
    expect(tokens.map((token) => token.id)).toEqual([approved.pat.id])
    // Only the member's own: the admin's list does not hold it, nor may the admin revoke it here.
    expect((await right(Effect.flatMap(TokenDesk, (t) => t.tokens(admin)))).map((token) => token.id)).not.toContain(approved.pat.id)
    expect(await refusal(Effect.flatMap(TokenDesk, (t) => t.revoke(admin, approved.pat.id)))).toMatchObject({ _tag: "Refused", status: 404 })
    const revoked = await right(Effect.flatMap(TokenDesk, (t) => t.revoke(dev, approved.pat.id)))
    // Revoking again changes nothing and answers the first revocation.
    expect(await right(Effect.flatMap(TokenDesk, (t) => t.revoke(dev, approved.pat.id)))).toEqual(revoked)
    expect(await right(Effect.flatMap(TokenDesk, (t) => t.tokens(dev)))).toEqual([])
    const other = await right(Effect.flatMap(TokenDesk, (t) => t.file(dev, { scope: "write", days: 1, justification: "Writes nothing; denied by the adapter test." })))
    expect(await right(Effect.flatMap(TokenDesk, (t) => t.deny(admin, other.id, "Not needed after all.")))).toMatchObject({ id: other.id, status: "denied" })
  })

  it("PartnerDesk: a client created with its secret once, listed, its secret rotated, disabled", async () => {
    const created = await right(Effect.flatMap(PartnerDesk, (p) => p.create(admin, "bb-adapter-erp", "read")))
    expect(created).toMatchObject({ name: "bb-adapter-erp", scope: "read" })
    expect(created.clientId).toMatch(/^service-partner-bb-adapter-erp-[0-9a-z]{8}$/)
    expect(created.clientSecret).toMatch(/^ap_cs_/)
    expect((await right(Effect.flatMap(PartnerDesk, (p) => p.list(admin)))).map((c) => c.clientId)).toContain(created.clientId)
    const rotated = await right(Effect.flatMap(PartnerDesk, (p) => p.rotateSecret(admin, created.clientId, 60)))
    expect(rotated.clientSecret).not.toBe(created.clientSecret)
    expect(await right(Effect.flatMap(PartnerDesk, (p) => p.setEnabled(admin, created.clientId, false)))).toMatchObject({ clientId: created.clientId, state: "disabled" })
    expect(await refusal(Effect.flatMap(PartnerDesk, (p) => p.create(admin, "bb-adapter-erp", "read")))).toMatchObject({ _tag: "Refused", status: 409 })
  })

  it("ScimTokenDesk: two tokens made with their secret once, a third refused (409), listed, revoked; another tenant's id 404", async () => {
    const first = await right(Effect.flatMap(ScimTokenDesk, (d) => d.create(admin, "Okta")))
    expect(first.token).toMatch(/^ap_scim_[0-9A-Za-z]{36}$/)
    expect(first.createdBy).toBe(`console:${tenant.adminEmail}`)
    const second = await right(Effect.flatMap(ScimTokenDesk, (d) => d.create(admin, "Okta, rotated")))
    expect(await refusal(Effect.flatMap(ScimTokenDesk, (d) => d.create(admin, "one too many")))).toMatchObject({ _tag: "Refused", status: 409 })
    const listed = await right(Effect.flatMap(ScimTokenDesk, (d) => d.list(admin)))
    expect(listed.map((t) => t.id).sort()).toEqual([first.id, second.id].sort())
    expect(JSON.stringify(listed)).not.toContain(first.token)
    expect((await right(Effect.flatMap(ScimTokenDesk, (d) => d.revoke(admin, first.id)))).revokedAt).not.toBeNull()
    const other = await system.createTenant("bb-adapters-scim-other")
    const theirs = await system.adminOk("gateway", "POST", `/admin/tenants/${other.id}/scim-tokens`, { label: "theirs" })
    expect(await refusal(Effect.flatMap(ScimTokenDesk, (d) => d.revoke(admin, theirs.id)))).toMatchObject({ _tag: "Refused", status: 404 })
  })

  it("WebhookDesk: a subscription created with its secret once, read, changed, its deliveries and attempts listed", async () => {
    const draft = { url: "http://127.0.0.1:9/bb-adapters", description: "adapter test", events: [] }
    const created = await right(Effect.flatMap(WebhookDesk, (w) => w.create(admin, draft)))
    expect(created.secret).toMatch(/^whsec_/)
    expect((await right(Effect.flatMap(WebhookDesk, (w) => w.list(admin)))).map((s) => s.id)).toContain(created.id)
    expect(Option.map(await right(Effect.flatMap(WebhookDesk, (w) => w.get(admin, created.id))), (s) => s.url)).toEqual(Option.some(draft.url))
    expect(await right(Effect.flatMap(WebhookDesk, (w) => w.get(admin, none)))).toEqual(Option.none())
    const updated = await right(Effect.flatMap(WebhookDesk, (w) => w.update(admin, created.id, { ...draft, description: "changed" })))
    expect(updated.description).toBe("changed")
    expect((await right(Effect.flatMap(WebhookDesk, (w) => w.rotateSecret(admin, created.id, 0)))).secret).not.toBe(created.secret)
    expect(await right(Effect.flatMap(WebhookDesk, (w) => w.deliveries(admin, created.id, 10)))).toEqual([])
    expect(await right(Effect.flatMap(WebhookDesk, (w) => w.recover(admin, created.id, Date.now() - 60_000)))).toBe(0)
    expect((await right(Effect.flatMap(WebhookDesk, (w) => w.setEnabled(admin, created.id, false)))).state).toBe("disabled")
    // The dispatcher's rules come back in its words: a disabled subscription's deliveries are not recovered.
    const disabled = await refusal(Effect.flatMap(WebhookDesk, (w) => w.recover(admin, created.id, Date.now() - 60_000)))
    expect(disabled).toMatchObject({ _tag: "Refused", status: 409 })
    expect(disabled.detail).toContain("is disabled: enable it first")
    expect((await refusal(Effect.flatMap(WebhookDesk, (w) => w.redeliver(admin, none))))._tag).toBe("Refused")
    expect((await refusal(Effect.flatMap(WebhookDesk, (w) => w.create(admin, { ...draft, url: "ftp://example.com/hook" }))))).toMatchObject({ _tag: "Refused", status: 400 })
  })

  it("GatewayLogDesk: what operators did to the tenant's tokens on the gateway's admin API", async () => {
    const pat = await system.createPat(tenant, "read")
    const events = await right(Effect.flatMap(GatewayLogDesk, (g) => g.securityEvents(tenant.id, { limit: 50 })))
    expect(events.map((e) => [e.action, e.target])).toContainEqual(["pat_created", pat.id])
  })

  it("answers UpstreamUnavailable when a service does not answer, from every adapter", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`
    const down = adapters({ gateway: dead, provisioning: dead, webhook: dead })
    const calls = [
      Effect.flatMap(DirectoryDesk, (d) => d.account(tenant.adminSub)),
      Effect.flatMap(DirectoryDesk, (d) => d.failedSignInTenants(tenant.adminEmail)),
      Effect.flatMap(MemberDesk, (m) => m.members(admin)),
      Effect.flatMap(TokenDesk, (t) => t.tokens(admin)),
      Effect.flatMap(PartnerDesk, (p) => p.list(admin)),
      Effect.flatMap(ScimTokenDesk, (d) => d.list(admin)),
      Effect.flatMap(WebhookDesk, (w) => w.list(admin)),
      Effect.flatMap(GatewayLogDesk, (g) => g.securityEvents(tenant.id, { limit: 1 }))
    ]
    for (const call of calls) {
      const result = await run(call as Effect.Effect<unknown, unknown, DirectoryDesk | TokenDesk | WebhookDesk | MemberDesk | PartnerDesk | ScimTokenDesk | GatewayLogDesk>, down)
      expect(Result.isFailure(result) ? (result.failure as { _tag: string })._tag : "answered").toBe("UpstreamUnavailable")
    }
  })
})
