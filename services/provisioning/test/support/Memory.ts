import { Conflict, Member, type MemberRemoved, type Tenant, Unavailable } from "@portfolio/domain"
import { type SecurityEvent } from "@portfolio/domain"
import { SecurityLog } from "@portfolio/platform/security"
import { securityLogIn } from "@portfolio/platform/testing"
import { UnitOfWork } from "@portfolio/platform/sql"
import { Context, DateTime, Effect, Layer, Option, Redacted, Ref, Semaphore } from "effect"
import { randomUUID } from "node:crypto"
import { IssuerDiscoveryOpenId } from "../../src/adapters/openid/IssuerDiscoveryOpenId.js"
import { SsoRelyingPartyOpenId } from "../../src/adapters/openid/SsoRelyingPartyOpenId.js"
import { ProvisioningSettings, type ProvisioningSettingsShape } from "../../src/Config.js"
import type { InvitationRecord } from "../../src/domain/InvitationRecord.js"
import { ProvisioningOutbox } from "../../src/ports/ProvisioningOutbox.js"
import { IdentityProvider, IdentityProviderUnavailable } from "../../src/ports/IdentityProvider.js"
import { InvitationRepository, PendingInvitationExists } from "../../src/ports/InvitationRepository.js"
import { MailArchive, type StoredMail } from "../../src/ports/MailArchive.js"
import { Mailer } from "../../src/ports/Mailer.js"
import { MemberExists, MemberRepository } from "../../src/ports/MemberRepository.js"
import { NotificationLog } from "../../src/ports/NotificationLog.js"
import { type ScimUserRecord, ScimUserRepository, ScimUserTaken, type ScimUserView } from "../../src/ports/ScimUserRepository.js"
import { comparesCaseInsensitively, type ScimFilterCondition } from "../../src/domain/ScimFilter.js"
import { type SsoConnectionRecord, SsoConnectionRepository } from "../../src/ports/SsoConnectionRepository.js"
import { type PendingSsoSignIn, SsoSignInRepository } from "../../src/ports/SsoSignInRepository.js"
import { TenantRepository } from "../../src/ports/TenantRepository.js"

interface MemberRow {
  readonly tenantId: string
  readonly member: Member
  readonly removedAt: DateTime.Utc | null
}
interface InvitationRow {
  readonly record: InvitationRecord
  readonly tokenHash: string
  readonly supersededAt: DateTime.Utc | null
  readonly wrongPasswords: number
}
interface ScimUserRow {
  readonly record: ScimUserRecord
  readonly deletedAt: DateTime.Utc | null
}
interface AccountRow {
  readonly subject: string
  readonly email: string
  readonly password: string | null
  readonly passwordSetAt: DateTime.Utc | null
}
export interface State {
  readonly tenants: ReadonlyArray<Tenant>
  readonly members: ReadonlyArray<MemberRow>
  readonly invitations: ReadonlyArray<InvitationRow>
  readonly accounts: ReadonlyArray<AccountRow>
  readonly scimUsers: ReadonlyArray<ScimUserRow>
  readonly outbox: ReadonlyArray<MemberRemoved>
  readonly mail: ReadonlyArray<StoredMail>
  /** The notification log: `<event id> <recipient in lower case>`. */
  readonly notifications: ReadonlyArray<string>
  readonly securityEvents: ReadonlyArray<SecurityEvent>
  readonly ssoConnections: ReadonlyArray<{ readonly record: SsoConnectionRecord; readonly clientSecret: Redacted.Redacted<string> }>
  readonly ssoSignIns: ReadonlyArray<PendingSsoSignIn>
  /** The mailer cannot hand a message over, as an unreachable SMTP server. */
  readonly mailerDown: boolean
  /** The identity provider answers nothing, as a remote one (Keycloak) may. */
  readonly identityDown: boolean
}

const empty: State = { tenants: [], members: [], invitations: [], accounts: [], scimUsers: [], outbox: [], mail: [], notifications: [], securityEvents: [], ssoConnections: [], ssoSignIns: [], mailerDown: false, identityDown: false }

/** The committed state of the in-memory store behind every port; tests read and poke it directly. */
export class MemoryStore extends Context.Service<MemoryStore, Ref.Ref<State>>()("test/MemoryStore") {
  static readonly layer = Layer.effect(MemoryStore, Ref.make(empty))
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
const isOpen = (row: InvitationRow) => row.record.acceptedAt === null && row.record.revokedAt === null && row.supersededAt === null
const newestFirst = <A>(key: (a: A) => DateTime.Utc) => (a: A, b: A) => DateTime.toEpochMillis(key(b)) - DateTime.toEpochMillis(key(a))
// PostgreSQL breaks ties of `created_at DESC` on the uuid, also descending.
type InvitationKey = Pick<InvitationRecord, "createdAt" | "id">
const invitationsNewestFirst = (a: InvitationKey, b: InvitationKey) =>
  newestFirst((r: InvitationKey) => r.createdAt)(a, b) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

/**
 * The ports in memory, with PostgreSQL's transactions as the contract suites observe them: one unit
 * of work at a time holds the store and works on a copy, which replaces the store when the work
 * succeeds and is dropped when it fails. A write outside a unit of work, or a read that locks rows
 * in PostgreSQL, waits for the unit of work in progress; a plain read sees the committed state.
 */
const ports = Layer.effectContext(
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const writer = yield* Semaphore.make(1)
    // The copy of the store that the current fiber's unit of work works on: a fiber it forks inherits
    // it, nothing is passed back on join. Keyed by this store, as two stores may serve one fiber.
    const transaction = Context.Reference<Option.Option<Ref.Ref<State>>>(`test/MemoryTransaction/${randomUUID()}`, {
      defaultValue: Option.none
    })
    const read = Effect.flatMap(transaction, (copy) => Ref.get(Option.getOrElse(copy, () => store)))
    const update = <A>(f: (s: State) => readonly [A, State]) =>
      Effect.flatMap(transaction, (copy) =>
        Option.match(copy, { onNone: () => writer.withPermits(1)(Ref.modify(store, f)), onSome: (ref) => Ref.modify(ref, f) }))
    const lockingRead = <A>(f: (s: State) => A) => update((s) => [f(s), s] as const)
    // Fault switches are the test's, not data: read from the committed store, never rolled back.
    const faults = Ref.get(store)

    const unitOfWork = UnitOfWork.of({
      run: (work) =>
        Effect.flatMap(transaction, (outer) =>
          Option.match(outer, {
            // Inside another unit of work, as a savepoint: a failure undoes only this part.
            onSome: (copy) => Effect.flatMap(Ref.get(copy), (savepoint) => Effect.onError(work, () => Ref.set(copy, savepoint))),
            onNone: () =>
              writer.withPermits(1)(Effect.gen(function*() {
                const copy = yield* Ref.make(yield* Ref.get(store))
                const result = yield* Effect.provideService(work, transaction, Option.some(copy))
                const committed = yield* Ref.get(copy)
                yield* Ref.update(store, (s) => ({ ...committed, mailerDown: s.mailerDown, identityDown: s.identityDown }))
                return result
              }))
          }))
    })

    const tenants = TenantRepository.of({
      insert: (tenant) =>
        Effect.flatten(update<Effect.Effect<void, Conflict>>((s) =>
          s.tenants.some((t) => t.slug === tenant.slug)
            ? [Effect.fail(new Conflict({ detail: `A tenant with the slug '${tenant.slug}' already exists.` })), s]
            : [Effect.void, { ...s, tenants: [...s.tenants, tenant] }]
        )),
      findBySlug: (slug) => Effect.map(read, (s) => Option.fromNullishOr(s.tenants.find((t) => t.slug === slug))),
      findById: (id) => Effect.map(read, (s) => Option.fromNullishOr(s.tenants.find((t) => t.id === id)))
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
        Effect.map(read, (s) => Option.fromNullishOr(active(s, tenantId).find((m) => same(m.member.userEmail, email))?.member)),
      findActiveBySub: (tenantId, userSub) =>
        Effect.map(read, (s) => Option.fromNullishOr(active(s, tenantId).find((m) => m.member.userSub === userSub)?.member)),
      hasRemovedMembership: (tenantId, userSub) =>
        Effect.map(read, (s) => s.members.some((m) => m.tenantId === tenantId && m.member.userSub === userSub && m.removedAt !== null)),
      listActive: (tenantId, page) =>
        Effect.map(read, (s) => {
          // A row's index stands for PostgreSQL's identity column: the order of writing.
          const rows = s.members.map((row, id) => ({ row, id })).filter(({ row }) => row.tenantId === tenantId)
          const sorted = rows
            .filter(({ row }) => row.removedAt === null)
            .sort((a, b) => newestFirst((r: MemberRow) => r.member.grantedAt)(a.row, b.row) || b.id - a.id)
          if (page === undefined) return sorted.map(({ row }) => row.member)
          const after = Option.map(page.after, (position) => {
            const at = DateTime.toEpochMillis(position.grantedAt)
            const named = rows.filter(({ row }) => row.member.userSub === position.userSub && DateTime.toEpochMillis(row.member.grantedAt) === at)
            // As the SQL's max(id): no such membership leaves the ties of that time out.
            return { at, id: named.length === 0 ? Number.NaN : Math.max(...named.map(({ id }) => id)) }
          })
          return sorted
            .filter(({ id, row }) => {
              if (Option.isNone(after)) return true
              const at = DateTime.toEpochMillis(row.member.grantedAt)
              return at < after.value.at || (at === after.value.at && id < after.value.id)
            })
            .slice(0, page.limit)
            .map(({ row }) => row.member)
        }),
      listActiveByUserSub: (userSub) =>
        Effect.map(read, (s) =>
          s.members.filter((m) => m.member.userSub === userSub && m.removedAt === null).map(({ member, tenantId }) => ({ tenantId, member }))),
      changeRole: (tenantId, userSub, role) =>
        update((s) => {
          const target = active(s, tenantId).find((m) => m.member.userSub === userSub)
          if (target === undefined) return [false, s]
          const member = new Member({ ...target.member, arbRole: role })
          return [true, { ...s, members: s.members.map((m) => (m === target ? { ...m, member } : m)) }]
        }),
      lockActiveAdmins: (tenantId) =>
        lockingRead((s) => active(s, tenantId).filter((m) => m.member.arbRole === "tenant-admin").map((m) => m.member.userSub)),
      remove: (tenantId, userSub, at) =>
        update((s) => {
          const target = active(s, tenantId).find((m) => m.member.userSub === userSub)
          if (target === undefined) return [false, s]
          return [true, { ...s, members: s.members.map((m) => (m === target ? { ...m, removedAt: at } : m)) }]
        })
    })

    const close = (named: (record: InvitationRecord) => boolean, f: (record: InvitationRecord) => InvitationRecord) =>
      update((s) => {
        const target = s.invitations.find((row) => named(row.record) && row.record.acceptedAt === null && row.record.revokedAt === null)
        if (target === undefined) return [false, s] as const
        return [true, { ...s, invitations: s.invitations.map((row) => (row === target ? { ...row, record: f(row.record) } : row)) }] as const
      })
    const invitations = InvitationRepository.of({
      insert: (record, tokenHash) =>
        Effect.flatten(update<Effect.Effect<void, PendingInvitationExists>>((s) => {
          const rows = s.invitations.map((row) =>
            row.record.tenantId === record.tenantId && same(row.record.email, record.email) && isOpen(row) &&
              DateTime.isLessThanOrEqualTo(row.record.expiresAt, record.createdAt)
              ? { ...row, supersededAt: record.createdAt }
              : row
          )
          return rows.some((row) => row.record.tenantId === record.tenantId && same(row.record.email, record.email) && isOpen(row))
            ? [Effect.fail(new PendingInvitationExists()), s]
            : [Effect.void, { ...s, invitations: [...rows, { record, tokenHash, supersededAt: null, wrongPasswords: 0 }] }]
        })),
      countCreatedSince: (tenantId, since) =>
        lockingRead((s) => {
          const recent = s.invitations
            .map((row) => row.record)
            .filter((r) => r.tenantId === tenantId && r.kind === "invitation" && DateTime.isGreaterThan(r.createdAt, since))
            .sort(newestFirst((r) => r.createdAt))
          return { count: recent.length, oldest: Option.fromNullishOr(recent.at(-1)?.createdAt) }
        }),
      hasPending: (tenantId, email, at) =>
        Effect.map(read, (s) =>
          s.invitations.some((row) =>
            row.record.tenantId === tenantId && same(row.record.email, email) && isOpen(row) && DateTime.isGreaterThan(row.record.expiresAt, at)
          )),
      list: (tenantId, page) =>
        Effect.map(read, (s) => {
          const sorted = s.invitations.map((row) => row.record).filter((r) => r.tenantId === tenantId).sort(invitationsNewestFirst)
          if (page === undefined) return sorted
          return sorted
            .filter((record) =>
              Option.match(page.after, {
                onNone: () => true,
                onSome: (position) => invitationsNewestFirst(position, record) < 0
              })
            )
            .slice(0, page.limit)
        }),
      findById: (tenantId, id) =>
        Effect.map(read, (s) => Option.fromNullishOr(s.invitations.find((row) => row.record.tenantId === tenantId && row.record.id === id)?.record)),
      findByTokenHash: (tokenHash) =>
        lockingRead((s) => Option.fromNullishOr(s.invitations.find((row) => row.tokenHash === tokenHash)?.record)),
      markRevoked: (id, at) => close((record) => record.id === id, (record) => ({ ...record, revokedAt: at })),
      markAccepted: (id, at) => close((record) => record.id === id, (record) => ({ ...record, acceptedAt: at })),
      changeRole: (tenantId, id, role) =>
        close((record) => record.tenantId === tenantId && record.id === id, (record) => ({ ...record, arbRole: role })),
      recordWrongPassword: (id) =>
        update((s) => {
          const target = s.invitations.find((row) => row.record.id === id)
          if (target === undefined) return [0, s] as const
          const counted = { ...target, wrongPasswords: target.wrongPasswords + 1 }
          return [counted.wrongPasswords, { ...s, invitations: s.invitations.map((row) => (row === target ? counted : row)) }] as const
        })
    })

    const scimUsers = scimUsersIn(read, update, lockingRead, active)

    const identityUp = Effect.flatMap(faults, (s) =>
      s.identityDown ? Effect.fail(new IdentityProviderUnavailable({ reason: "connect ECONNREFUSED keycloak:8443" })) : Effect.void)
    const accountOf = (row: AccountRow) => ({
      subject: row.subject,
      email: row.email,
      hasPassword: row.password !== null,
      passwordSetAt: row.passwordSetAt
    })
    const identity = IdentityProvider.of({
      ensureAccount: (email) =>
        Effect.andThen(identityUp, update((s) => {
          const found = s.accounts.find((a) => same(a.email, email))
          if (found !== undefined) return [accountOf(found), s]
          // The provider mints its subjects itself, as PostgreSQL's gen_random_uuid() does.
          const account: AccountRow = { subject: randomUUID(), email, password: null, passwordSetAt: null }
          return [accountOf(account), { ...s, accounts: [...s.accounts, account] }]
        })),
      setPassword: (subject, password) =>
        Effect.andThen(identityUp, Effect.flatMap(DateTime.now, (at) =>
          update((s) => [undefined, {
            ...s,
            accounts: s.accounts.map((a) => (a.subject === subject ? { ...a, password: Redacted.value(password), passwordSetAt: at } : a))
          }]))),
      // Kept in clear here: no hash, and so no time to even out.
      verifyPassword: (email, password) =>
        Effect.andThen(identityUp, Effect.map(read, (s) => {
          const found = s.accounts.find((a) => same(a.email, email) && a.password !== null && a.password === Redacted.value(password))
          return Option.map(Option.fromNullishOr(found), accountOf)
        })),
      findAccount: (subject) =>
        Effect.andThen(identityUp, Effect.map(read, (s) => Option.map(Option.fromNullishOr(s.accounts.find((a) => a.subject === subject)), accountOf))),
      findAccountByEmail: (email) =>
        Effect.andThen(identityUp, Effect.map(read, (s) => Option.map(Option.fromNullishOr(s.accounts.find((a) => same(a.email, email))), accountOf)))
    })

    const outbox = ProvisioningOutbox.of({ append: (events) => update((s) => [undefined, { ...s, outbox: [...s.outbox, ...events] }]) })

    const notifications = NotificationLog.of({
      claim: (eventId, recipient) =>
        update((s) => {
          const key = `${eventId} ${recipient.toLowerCase()}`
          return s.notifications.includes(key) ? [false, s] : [true, { ...s, notifications: [...s.notifications, key] }]
        })
    })

    const securityLog = securityLogIn({
      read: Effect.map(read, (s) => s.securityEvents),
      append: (entries) => update((s) => [undefined, { ...s, securityEvents: s.securityEvents.concat(entries) }])
    })

    const mailer = Mailer.of({
      send: (message) =>
        Effect.flatMap(faults, (s) =>
          s.mailerDown
            ? Effect.fail(new Unavailable({ detail: "The e-mail could not be sent; retry shortly." }))
            : Effect.flatMap(DateTime.now, (createdAt) =>
              update((s) => [undefined, { ...s, mail: [...s.mail, { ...message, id: s.mail.length + 1, createdAt }] }])))
    })
    const archive = MailArchive.of({
      list: (to, limit) =>
        Effect.map(read, (s) =>
          s.mail.filter((m) => Option.match(to, { onNone: () => true, onSome: (address) => same(m.to, address) })).reverse().slice(0, limit))
    })

    const ssoConnections = SsoConnectionRepository.of({
      save: (record, clientSecret) =>
        update((s) => [undefined, {
          ...s,
          ssoConnections: [...s.ssoConnections.filter((c) => c.record.tenantId !== record.tenantId), { record, clientSecret }]
        }]),
      find: (tenantId) => Effect.map(read, (s) => Option.fromNullishOr(s.ssoConnections.find((c) => c.record.tenantId === tenantId)?.record)),
      findClientSecret: (tenantId) =>
        Effect.map(read, (s) => Option.fromNullishOr(s.ssoConnections.find((c) => c.record.tenantId === tenantId)?.clientSecret)),
      confirmDomains: (tenantId, at) =>
        update((s) => {
          const found = s.ssoConnections.find((c) => c.record.tenantId === tenantId)
          if (found === undefined) return [Option.none(), s]
          const record = { ...found.record, domainsConfirmed: true, updatedAt: at }
          return [Option.some(record), { ...s, ssoConnections: s.ssoConnections.map((c) => (c === found ? { ...c, record } : c)) }]
        }),
      tenantIdsForDomain: (domain) =>
        Effect.map(read, (s) => s.ssoConnections.filter((c) => c.record.domainsConfirmed && c.record.domains.includes(domain)).map((c) => c.record.tenantId)),
      remove: (tenantId) =>
        update((s) => [
          s.ssoConnections.some((c) => c.record.tenantId === tenantId),
          { ...s, ssoConnections: s.ssoConnections.filter((c) => c.record.tenantId !== tenantId) }
        ])
    })

    const alive = (now: DateTime.Utc) => (pending: PendingSsoSignIn) => DateTime.isGreaterThan(pending.expiresAt, now)
    const ssoSignIns = SsoSignInRepository.of({
      save: (pending, now) => update((s) => [undefined, { ...s, ssoSignIns: [...s.ssoSignIns.filter(alive(now)), pending] }]),
      take: (stateHash, tenantId, now) =>
        update((s) => {
          const found = s.ssoSignIns.find((p) => p.stateHash === stateHash && p.tenantId === tenantId && alive(now)(p))
          return [Option.fromNullishOr(found), { ...s, ssoSignIns: s.ssoSignIns.filter((p) => p !== found) }]
        })
    })

    return Context.empty().pipe(
      Context.add(TenantRepository, tenants),
      Context.add(SsoSignInRepository, ssoSignIns),
      Context.add(SsoConnectionRepository, ssoConnections),
      Context.add(MemberRepository, members),
      Context.add(InvitationRepository, invitations),
      Context.add(ScimUserRepository, scimUsers),
      Context.add(IdentityProvider, identity),
      Context.add(ProvisioningOutbox, outbox),
      Context.add(NotificationLog, notifications),
      Context.add(SecurityLog, securityLog),
      Context.add(Mailer, mailer),
      Context.add(MailArchive, archive),
      Context.add(UnitOfWork, unitOfWork)
    )
  })
)

type Update = <A>(f: (s: State) => readonly [A, State]) => Effect.Effect<A>

/**
 * The SCIM Users in memory, with PostgreSQL's partial unique indexes (userName, e-mail and member
 * among the Users not deleted) and `active` read from the members, as the SQL joins them.
 */
const scimUsersIn = (
  read: Effect.Effect<State>,
  update: Update,
  lockingRead: <A>(f: (s: State) => A) => Effect.Effect<A>,
  activeMembers: (s: State, tenantId: string) => ReadonlyArray<MemberRow>
) => {
  const live = (s: State, tenantId: string) => s.scimUsers.filter((row) => row.deletedAt === null && row.record.tenantId === tenantId)
  /** As the SQL joins the linked member while active: `active`, and the member's role over the stored one. */
  const viewOf = (s: State) => (record: ScimUserRecord): ScimUserView => {
    const member = record.userSub === null ? undefined : activeMembers(s, record.tenantId).find((m) => m.member.userSub === record.userSub)
    return { ...record, arbRole: member?.member.arbRole ?? record.arbRole, active: member !== undefined }
  }
  /** The role of the userSub's latest membership in the tenant, the active one first, as the SQL orders them. */
  const lastRoleOf = (s: State, tenantId: string, userSub: string) => {
    const memberships = s.members.filter((m) => m.tenantId === tenantId && m.member.userSub === userSub)
    return (memberships.find((m) => m.removedAt === null) ?? memberships.at(-1))?.member.arbRole
  }
  /** The uniqueness a record breaks among the others of its tenant, if any. */
  const clash = (s: State, record: ScimUserRecord) => {
    const others = live(s, record.tenantId).filter((row) => row.record.id !== record.id).map((row) => row.record)
    if (others.some((o) => same(o.userName, record.userName))) return new ScimUserTaken({ attribute: "userName" })
    if (others.some((o) => same(o.email, record.email) || (record.userSub !== null && o.userSub === record.userSub))) {
      return new ScimUserTaken({ attribute: "email" })
    }
    return undefined
  }
  const linked = (s: State, tenantId: string, userSub: string) => live(s, tenantId).some((row) => row.record.userSub === userSub)
  const replace = (s: State, record: ScimUserRecord): State => ({
    ...s,
    scimUsers: s.scimUsers.map((row) => (row.record.id === record.id ? { ...row, record } : row))
  })
  const meets = (record: ScimUserRecord) => ({ attribute, value }: ScimFilterCondition) => {
    const stored = { userName: record.userName, "emails.value": record.email, externalId: record.externalId, id: record.id }[attribute]
    return stored !== null && (comparesCaseInsensitively(attribute) ? same(stored, value) : stored === value)
  }
  const oldestFirst = (a: ScimUserRecord, b: ScimUserRecord) =>
    DateTime.toEpochMillis(a.createdAt) - DateTime.toEpochMillis(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  const find = (s: State, tenantId: string, id: string) =>
    Option.map(Option.fromNullishOr(live(s, tenantId).find((row) => row.record.id === id)), (row) => viewOf(s)(row.record))

  return ScimUserRepository.of({
    adoptMembers: (tenantId, at) =>
      update((s0) => {
        let s = s0
        for (const row of live(s, tenantId).filter((r) => r.record.userSub === null)) {
          const member = activeMembers(s, tenantId).find((m) => same(m.member.userEmail, row.record.email) && !linked(s, tenantId, m.member.userSub))
          if (member === undefined) continue
          s = replace(s, { ...row.record, userSub: member.member.userSub, arbRole: member.member.arbRole, version: row.record.version + 1, updatedAt: at })
        }
        const unadopted = activeMembers(s, tenantId)
          .map((row, order) => ({ row, order }))
          .sort((a, b) => DateTime.toEpochMillis(a.row.member.grantedAt) - DateTime.toEpochMillis(b.row.member.grantedAt) || a.order - b.order)
        for (const { row } of unadopted) {
          const { member } = row
          if (linked(s, tenantId, member.userSub)) continue
          const record: ScimUserRecord = {
            id: randomUUID(),
            tenantId,
            userName: member.userEmail,
            externalId: null,
            email: member.userEmail,
            givenName: null,
            familyName: null,
            formattedName: null,
            displayName: null,
            arbRole: member.arbRole,
            userSub: member.userSub,
            invitationId: null,
            version: 1,
            createdAt: at,
            updatedAt: at
          }
          if (clash(s, record) !== undefined) continue
          s = { ...s, scimUsers: [...s.scimUsers, { record, deletedAt: null }] }
        }
        return [undefined, s] as const
      }),
    list: (tenantId, filter, { limit, offset }) =>
      Effect.map(read, (s) => {
        const all = live(s, tenantId).map((row) => row.record).filter((record) => filter.every(meets(record))).sort(oldestFirst)
        return { totalResults: all.length, users: all.slice(offset, offset + limit).map(viewOf(s)) }
      }),
    findById: (tenantId, id) => Effect.map(read, (s) => find(s, tenantId, id)),
    lockById: (tenantId, id) => lockingRead((s) => find(s, tenantId, id)),
    insert: (record) =>
      Effect.flatten(update<Effect.Effect<void, ScimUserTaken>>((s) => {
        const refused = clash(s, record)
        return refused !== undefined ? [Effect.fail(refused), s] : [Effect.void, { ...s, scimUsers: [...s.scimUsers, { record, deletedAt: null }] }]
      })),
    update: (record, expectedVersion) =>
      Effect.flatten(update<Effect.Effect<boolean, ScimUserTaken>>((s) => {
        const current = live(s, record.tenantId).find((row) => row.record.id === record.id)
        if (current === undefined || current.record.version !== expectedVersion) return [Effect.succeed(false), s]
        const refused = clash(s, record)
        return refused !== undefined ? [Effect.fail(refused), s] : [Effect.succeed(true), replace(s, record)]
      })),
    markDeleted: (tenantId, id, at) =>
      update((s) => {
        const target = live(s, tenantId).find((row) => row.record.id === id)
        if (target === undefined) return [false, s]
        return [true, { ...s, scimUsers: s.scimUsers.map((row) => (row === target ? { ...row, deletedAt: at } : row)) }]
      }),
    memberChanged: (tenantId, userSub, invitationId, at) =>
      update((s) => {
        const target = live(s, tenantId).find((row) => row.record.userSub === userSub) ??
          (invitationId === null ? undefined : live(s, tenantId).find((row) => row.record.invitationId === invitationId))
        if (target === undefined) return [undefined, s]
        const arbRole = lastRoleOf(s, tenantId, userSub) ?? target.record.arbRole
        return [undefined, replace(s, { ...target.record, userSub, arbRole, version: target.record.version + 1, updatedAt: at })]
      })
  })
}

export const testSettings = (overrides: Partial<ProvisioningSettingsShape> = {}) =>
  Layer.succeed(ProvisioningSettings, {
    acceptUrl: "https://portfolio.example/accept",
    invitationsPerTenantPerHour: 100,
    trustedProxyHops: 0,
    consoleUrl: "https://portfolio.example/console",
    allowLoopbackIssuers: false,
    publicBaseUrl: "https://portfolio.example/api/v1",
    ...overrides
  })

/** Every provisioning port in memory, plus the store for inspection. */
export const MemoryLayer = (settings: Partial<ProvisioningSettingsShape> = {}) =>
  Layer.mergeAll(ports, IssuerDiscoveryOpenId, SsoRelyingPartyOpenId, testSettings(settings)).pipe(Layer.provideMerge(MemoryStore.layer))
