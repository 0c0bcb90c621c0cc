import type { ArbRole } from "@portfolio/domain"
import type { Person } from "./Memory.js"

export const Acme = { tenantId: "00000000-0000-4000-8000-00000000a0a0", tenantSlug: "acme" }
export const Globex = { tenantId: "00000000-0000-4000-8000-00000000b0b0", tenantSlug: "globex" }

const person = (subject: string, email: string, memberships: ReadonlyArray<readonly [typeof Acme, ArbRole]>): Person => ({
  account: { subject, email, memberships: memberships.map(([t, role]) => ({ ...t, role })), passwordSetAtMs: null, ssoOnlyTenantIds: [] },
  password: `${subject} has a long passphrase`
})

export const alice = person("sub-alice", "alice@acme.test", [[Acme, "tenant-admin"]])
export const bob = person("sub-bob", "bob@acme.test", [[Acme, "architect"]])
export const vera = person("sub-vera", "vera@acme.test", [[Acme, "viewer"]])
export const gina = person("sub-gina", "gina@globex.test", [[Globex, "tenant-admin"]])
export const max = person("sub-max", "max@both.test", [[Acme, "contributor"], [Globex, "tenant-admin"]])

export const everyone = () => [alice, bob, vera, gina, max].map((p) => ({ ...p, account: { ...p.account, memberships: [...p.account.memberships] } }))

/** Tenant-admins whom the matrix removes (rita) or demotes to viewer (dora) once they are signed in. */
export const rita = person("sub-rita", "rita@acme.test", [[Acme, "tenant-admin"]])
export const dora = person("sub-dora", "dora@acme.test", [[Acme, "tenant-admin"]])
