import type { Member, Tenant } from "@portfolio/domain"
import { Conflict } from "@portfolio/domain"
import { EventOutbox } from "../../src/ports/EventOutbox.js"
import { IdentityProvider, IdentityProviderUnavailable } from "../../src/ports/IdentityProvider.js"
import { type InvitationRecord, InvitationRepository, PendingInvitationExists } from "../../src/ports/InvitationRepository.js"
import { type MailMessage, Mailer } from "../../src/ports/Mailer.js"
import { MemberExists, MemberRepository } from "../../src/ports/MemberRepository.js"
import { type MemberRemoved } from "@portfolio/domain/events/MemberRemoved"
import { TenantRepository } from "../../src/ports/TenantRepository.js"
import { UnitOfWork } from "@portfolio/platform"
import { Context, DateTime, Effect, Layer, Option, Redacted, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { ProvisioningSettings, type ProvisioningSettingsShape } from "../../src/Config.js"

export interface MemberRow {
  readonly tenantId: string
  readonly member: Member
  readonly removedAt: DateTime.Utc | null
}
export interface InvitationRow {
  readonly record: InvitationRecord
  readonly tokenHash: string
  readonly supersededAt: DateTime.Utc | null
}
export interface AccountRow {
  readonly subject: string
  readonly email: string
  readonly password: string | null
}
export interface State {
  readonly tenants: ReadonlyArray<Tenant>
  readonly members: ReadonlyArray<MemberRow>
  readonly invitations: ReadonlyArray<InvitationRow>
  readonly accounts: ReadonlyArray<AccountRow>
  readonly outbox: ReadonlyArray<MemberRemoved>
  readonly mail: ReadonlyArray<MailMessage>
  readonly mailerDown: boolean
  /** The identity provider answers nothing, as a remote one (Keycloak) may. */
  readonly identityDown: boolean
}

const empty: State = { tenants: [], members: [], invitations: [], accounts: [], outbox: [], mail: [], mailerDown: false, identityDown: false }

/** The in-memory store behind every port; tests read and poke it directly. */
export class MemoryStore extends Context.Tag("test/MemoryStore")<MemoryStore, Ref.Ref<State>>() {
  static readonly layer = Layer.effect(MemoryStore, Ref.make(empty))
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
const isOpen = (row: InvitationRow) => row.record.acceptedAt === null && row.record.revokedAt === null && row.supersededAt === null
const newestFirst = <A>(key: (a: A) => DateTime.Utc) => (a: A, b: A) => DateTime.toEpochMillis(key(b)) - DateTime.toEpochMillis(key(a))

const ports = Layer.effectContext(
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const update = <A>(f: (s: State) => readonly [A, State]) => Ref.modify(store, f)
    const read = Ref.get(store)

    const tenants = TenantRepository.of({
      insert: (tenant) =>
        Effect.flatten(update<Effect.Effect<void, Conflict>>((s) =>
          s.tenants.some((t) => t.slug === tenant.slug)
            ? [Effect.fail(new Conflict({ detail: `A tenant with the slug '${tenant.slug}' already exists.` })), s]
            : [Effect.void, { ...s, tenants: [...s.tenants, tenant] }]
        )),
      findBySlug: (slug) => Effect.map(read, (s) => Option.fromNullable(s.tenants.find((t) => t.slug === slug))),
      findById: (id) => Effect.map(read, (s) => Option.fromNullable(s.tenants.find((t) => t.id === id)))
    })

    const active = (s: State, tenantId: string) => s.members.filter((m) => m.tenantId === tenantId && m.removedAt === null)
    const members = MemberRepository.of({
      insert: ({ member, tenantId }) =>
        Effect.flatten(update<Effect.Effect<void, MemberExists>>((s) =>
          active(s, tenantId).some((m) => same(m.member.userEmail, member.userEmail) || m.member.userSub === member.userSub)
            ? [Effect.fail(new MemberExists()), s]
            : [Effect.void, { ...s, members: [...s.members, { tenantId, member, removedAt: null }] }]
        )),
      findActiveByEmail: (tenantId, email) =>
        Effect.map(read, (s) => Option.fromNullable(active(s, tenantId).find((m) => same(m.member.userEmail, email))?.member)),
      findActiveBySub: (tenantId, userSub) =>
        Effect.map(read, (s) => Option.fromNullable(active(s, tenantId).find((m) => m.member.userSub === userSub)?.member)),
      hasRemovedMembership: (tenantId, userSub) =>
        Effect.map(read, (s) => s.members.some((m) => m.tenantId === tenantId && m.member.userSub === userSub && m.removedAt !== null)),
      listActive: (tenantId) =>
        Effect.map(read, (s) => active(s, tenantId).map((m) => m.member).reverse().sort(newestFirst((m) => m.grantedAt))),
      lockActiveAdmins: (tenantId) =>
        Effect.map(read, (s) => active(s, tenantId).filter((m) => m.member.arbRole === "tenant-admin").map((m) => m.member.userSub)),
      remove: (tenantId, userSub, at) =>
        update((s) => {
          const target = active(s, tenantId).find((m) => m.member.userSub === userSub)
          if (target === undefined) return [false, s]
          return [true, { ...s, members: s.members.map((m) => (m === target ? { ...m, removedAt: at } : m)) }]
        })
    })

    const invitations = InvitationRepository.of({
      insert: (record, tokenHash) =>
        Effect.flatten(update<Effect.Effect<void, PendingInvitationExists>>((s) => {
          const rows = s.invitations.map((row) =>
            row.record.tenantId === record.tenantId && same(row.record.email, record.email) && isOpen(row) &&
              DateTime.lessThanOrEqualTo(row.record.expiresAt, record.createdAt)
              ? { ...row, supersededAt: record.createdAt }
              : row
          )
          return rows.some((row) => row.record.tenantId === record.tenantId && same(row.record.email, record.email) && isOpen(row))
            ? [Effect.fail(new PendingInvitationExists()), s]
            : [Effect.void, { ...s, invitations: [...rows, { record, tokenHash, supersededAt: null }] }]
        })),
      countCreatedSince: (tenantId, since) =>
        Effect.map(read, (s) => {
          const recent = s.invitations
            .map((row) => row.record)
            .filter((r) => r.tenantId === tenantId && DateTime.greaterThan(r.createdAt, since))
            .sort(newestFirst((r) => r.createdAt))
          return { count: recent.length, oldest: Option.fromNullable(recent.at(-1)?.createdAt) }
        }),
      list: (tenantId) =>
        Effect.map(read, (s) =>
          s.invitations.map((row) => row.record).filter((r) => r.tenantId === tenantId).reverse().sort(newestFirst((r) => r.createdAt))),
      findById: (tenantId, id) =>
        Effect.map(read, (s) => Option.fromNullable(s.invitations.find((row) => row.record.tenantId === tenantId && row.record.id === id)?.record)),
      findByTokenHash: (tokenHash) =>
        Effect.map(read, (s) => Option.fromNullable(s.invitations.find((row) => row.tokenHash === tokenHash)?.record)),
      markRevoked: (id, at) => close(id, (record) => ({ ...record, revokedAt: at })),
      markAccepted: (id, at) => close(id, (record) => ({ ...record, acceptedAt: at }))
    })
    function close(id: string, f: (record: InvitationRecord) => InvitationRecord) {
      return update((s) => {
        const target = s.invitations.find((row) => row.record.id === id && row.record.acceptedAt === null && row.record.revokedAt === null)
        if (target === undefined) return [false, s] as const
        return [true, { ...s, invitations: s.invitations.map((row) => (row === target ? { ...row, record: f(row.record) } : row)) }] as const
      })
    }

    const identityUp = Effect.flatMap(read, (s) =>
      s.identityDown ? Effect.fail(new IdentityProviderUnavailable({ reason: "connect ECONNREFUSED keycloak:8443" })) : Effect.void)
    const identity = IdentityProvider.of({
      ensureAccount: (email) =>
        Effect.zipRight(identityUp, update((s) => {
          const found = s.accounts.find((a) => same(a.email, email))
          if (found !== undefined) return [{ subject: found.subject, email: found.email }, s]
          const account = { subject: randomUUID(), email, password: null }
          return [{ subject: account.subject, email }, { ...s, accounts: [...s.accounts, account] }]
        })),
      setPassword: (subject, password) =>
        Effect.zipRight(identityUp, Ref.update(store, (s) => ({
          ...s,
          accounts: s.accounts.map((a) => (a.subject === subject ? { ...a, password: Redacted.value(password) } : a))
        })))
    })

    const outbox = EventOutbox.of({ append: (event) => Ref.update(store, (s) => ({ ...s, outbox: [...s.outbox, event] })) })

    const mailer = Mailer.of({
      send: (message) =>
        Effect.flatten(update<Effect.Effect<void>>((s) =>
          s.mailerDown
            ? [Effect.die(new Error("mail server unreachable")), s]
            : [Effect.void, { ...s, mail: [...s.mail, message] }]
        ))
    })

    // Rolls the whole store back when the work fails, as a transaction would.
    const unitOfWork = UnitOfWork.of({
      run: (work) =>
        Effect.flatMap(read, (snapshot) => Effect.onError(work, () => Ref.set(store, snapshot)))
    })

    return Context.empty().pipe(
      Context.add(TenantRepository, tenants),
      Context.add(MemberRepository, members),
      Context.add(InvitationRepository, invitations),
      Context.add(IdentityProvider, identity),
      Context.add(EventOutbox, outbox),
      Context.add(Mailer, mailer),
      Context.add(UnitOfWork, unitOfWork)
    )
  })
)

export const testSettings = (overrides: Partial<ProvisioningSettingsShape> = {}) =>
  Layer.succeed(ProvisioningSettings, { acceptUrl: "https://portfolio.example/accept", invitationsPerTenantPerHour: 100, ...overrides })

/** Every provisioning port in memory, plus the store for inspection. */
export const MemoryLayer = (settings: Partial<ProvisioningSettingsShape> = {}) =>
  Layer.mergeAll(ports, testSettings(settings)).pipe(Layer.provideMerge(MemoryStore.layer))
