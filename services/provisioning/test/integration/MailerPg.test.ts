import { SqlClient } from "effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { InternalSecret } from "@portfolio/platform/security"
import { Effect, Layer, Option, Redacted } from "effect"
import { MailArchivePg, UnreadableMailText } from "../../src/adapters/postgres/MailArchivePg.js"
import { localMailKey, openMail, sealMail } from "../../src/adapters/postgres/SealedMail.js"
import { MailArchive } from "../../src/ports/MailArchive.js"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation } from "../../src/usecases/Invitations.js"
import { listOutboundMail } from "../../src/usecases/Mail.js"
import { invite, lastMailTo, pageClient, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { captureLogs } from "../support/Logs.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret } from "../support/TestServer.js"

/** Everything PostgreSQL keeps of the mail to `to`: each row as JSON, and the body's bytes with the printable ones as they are. */
const rowsAtRest = (to: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ row: string; body: string }>`SELECT row_to_json(m)::text AS row, encode(m.sealed_body, 'escape') AS body
      FROM provisioning.outbound_mail m WHERE lower(to_address) = lower(${to})`)

/** The archive as another INTERNAL_SECRET would read the same table. */
const archiveWithSecret = (secret: string) =>
  MailArchive.pipe(Effect.provide(MailArchivePg.pipe(Layer.provide(Layer.succeed(InternalSecret, secret))), { local: true }))

layer(PgAdaptersLayer(), { timeout: 60_000 })("the local mailer (MAIL_TRANSPORT=local)", (it) => {
  it.effect("keeps no usable link at rest or in the log, while the operator still reads it and it still works", () => {
    const logs: Array<string> = []
    return Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("sealed", "boss@sealed.test")
      yield* createInvitation(caller, invite("Ana@Sealed.test", "viewer"))

      const [operatorView] = yield* listOutboundMail("ana@sealed.test")
      expect(operatorView).toMatchObject({ to: "Ana@Sealed.test", subject: "boss@sealed.test invited you to join sealed on Architecture Portfolio" })
      const token = tokenOf(operatorView!.text)
      expect(operatorView!.text).toContain(`https://portfolio.example/accept/${token}`)

      const atRest = yield* rowsAtRest("ana@sealed.test")
      expect(atRest).toHaveLength(1)
      for (const { body, row } of atRest) {
        for (const stored of [row, body]) {
          expect(stored).not.toContain(token)
          expect(stored).not.toMatch(/\/accept|Open this link|invited you to join the workspace/)
        }
      }
      expect(JSON.parse(atRest[0]!.row)).toMatchObject({ to_address: "Ana@Sealed.test", subject: operatorView!.subject })

      // The admin's welcome link (createTenant), then the invitation: neither link is logged.
      const mailLines = logs.filter((line) => line.includes("mail stored locally"))
      expect(mailLines).toHaveLength(2)
      expect(mailLines[0]).toContain("Your workspace sealed is ready: set your password")
      expect(mailLines[1]).toContain("Ana@Sealed.test")
      expect(mailLines[1]).toContain(operatorView!.subject)
      const welcomeToken = tokenOf(yield* lastMailTo("boss@sealed.test"))
      expect(logs.filter((line) => line.includes(token) || line.includes(welcomeToken) || /\/accept|Open this link/.test(line))).toEqual([])

      expect((yield* acceptInvitation(token, Redacted.make("a long enough password"), pageClient)).userEmail).toBe("Ana@Sealed.test")
      expect(logs.filter((line) => line.includes(token))).toEqual([])
    }).pipe(Effect.provide(captureLogs(logs)))
  })

  it.effect("a body kept under another INTERNAL_SECRET, altered, or moved onto another row no longer opens", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("rotated")
      yield* createInvitation(caller, invite("one@rotated.test"))
      yield* createInvitation(caller, invite("two@rotated.test"))
      const unreadable = { text: UnreadableMailText, html: `<p>${UnreadableMailText}</p>` }

      const rotated = yield* archiveWithSecret(`${testSecret}-rotated`)
      expect(yield* rotated.list(Option.some("one@rotated.test"), 50)).toEqual([expect.objectContaining(unreadable)])

      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE provisioning.outbound_mail SET sealed_body = set_byte(sealed_body, 19, get_byte(sealed_body, 19) # 1)
                 WHERE to_address = 'one@rotated.test'`
      yield* sql`UPDATE provisioning.outbound_mail SET to_address = 'three@rotated.test' WHERE to_address = 'two@rotated.test'`
      const archive = yield* MailArchive
      for (const to of ["one@rotated.test", "three@rotated.test"]) {
        const [mail] = yield* archive.list(Option.some(to), 50)
        expect(mail, to).toMatchObject(unreadable)
      }
    }))
})

describe("sealed mail bodies (AES-256-GCM)", () => {
  const key = localMailKey(testSecret)
  const header = { to: "ana@example.com", subject: "You are invited" }
  const body = { text: "Open https://portfolio.example/accept/abc", html: "<p>Open it</p>" }

  it.effect("open with the same key and header, with a fresh IV each time", () =>
    Effect.gen(function*() {
      const [first, second] = [yield* sealMail(key, header, body), yield* sealMail(key, header, body)]
      expect(first.equals(second)).toBe(false)
      expect(first[0]).toBe(1)
      expect(openMail(key, header, first)).toEqual(Option.some(body))
      expect(openMail(key, header, second)).toEqual(Option.some(body))
      expect(first.toString("latin1")).not.toContain("accept")
    }))

  it.effect("do not open with another key, another header, or altered or cut bytes", () =>
    Effect.gen(function*() {
      const sealed = yield* sealMail(key, header, body)
      const flipped = Buffer.from(sealed)
      flipped[sealed.length - 1]! ^= 1
      expect([
        openMail(localMailKey(`${testSecret}!`), header, sealed),
        openMail(key, { ...header, to: "bob@example.com" }, sealed),
        openMail(key, { ...header, subject: "Another subject" }, sealed),
        openMail(key, header, flipped),
        openMail(key, header, sealed.subarray(0, 28)),
        openMail(key, header, Buffer.concat([Buffer.of(2), sealed.subarray(1)]))
      ]).toEqual(Array.from({ length: 6 }, () => Option.none()))
    }))

  it("derives a 256-bit key that differs from the secret and from another secret's", () => {
    expect(key).toHaveLength(32)
    expect(key.equals(Buffer.from(testSecret).subarray(0, 32))).toBe(false)
    expect(key.equals(localMailKey(`${testSecret}!`))).toBe(false)
    expect(key.equals(localMailKey(testSecret))).toBe(true)
  })
})
