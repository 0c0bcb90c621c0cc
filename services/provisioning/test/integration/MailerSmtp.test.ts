import { describe, expect, it } from "@effect/vitest"
import { Member, Unavailable } from "@portfolio/domain"
import { ConfigProvider, Effect, Layer, Option, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import { createServer } from "node:net"
import { SMTPServer } from "smtp-server"
import { MailerSmtp } from "../../src/adapters/mail/MailerSmtp.js"
import { smtpSettings } from "../../src/Config.js"
import { IdentityProvider } from "../../src/ports/IdentityProvider.js"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation, listInvitations } from "../../src/usecases/Invitations.js"
import { invite, pageClient, tenantWithAdmin } from "../support/Fixtures.js"
import { captureLogs } from "../support/Logs.js"
import { MemoryLayer, MemoryStore, testSettings } from "../support/Memory.js"
import { readMimeMessage } from "../support/MimeMessage.js"

const acceptUrl = "https://portfolio.example/accept"
const password = "p@ss:word"
const refusedRecipient = "bounce@example.com"

interface Received {
  readonly mailFrom: string | false
  readonly rcptTo: ReadonlyArray<string>
  readonly user: string | undefined
  readonly raw: string
}

/** A real SMTP server on an ephemeral port: no TLS, optional AUTH, one user, refuses one recipient. */
const smtpServer = Effect.acquireRelease(
  Effect.callback<{ readonly server: SMTPServer; readonly port: number; readonly received: Array<Received> }>((resume) => {
    const received: Array<Received> = []
    const server = new SMTPServer({
      authOptional: true,
      allowInsecureAuth: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      closeTimeout: 1_000,
      onAuth: (auth, _session, callback) =>
        auth.username === "mailer" && auth.password === password
          ? callback(null, { user: "mailer" })
          : callback(new Error("535 authentication failed")),
      onRcptTo: (address, _session, callback) =>
        address.address === refusedRecipient
          ? callback(Object.assign(new Error("5.1.1 mailbox unavailable"), { responseCode: 550 }))
          : callback(),
      onData: (stream, session, callback) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          received.push({
            mailFrom: session.envelope.mailFrom === false ? false : session.envelope.mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            user: session.user,
            raw: Buffer.concat(chunks).toString("utf8")
          })
          callback()
        })
      }
    })
    const listener = server.listen(0, "127.0.0.1", () => {
      const address = listener.address()
      if (address === null || typeof address === "string") return resume(Effect.die(new Error("no TCP address")))
      resume(Effect.succeed({ server, port: address.port, received }))
    })
  }),
  ({ server }) => Effect.callback<void>((resume) => server.close(() => resume(Effect.void)))
)

/** A port nothing listens on: bound, read, released. */
const closedPort = Effect.callback<number>((resume) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const address = probe.address()
    const port = address !== null && typeof address !== "string" ? address.port : 0
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/** The SMTP mailer as main.ts builds it: settings read from the environment, over the in-memory ports. */
const buildWithSmtp = (environment: Record<string, string>) =>
  Effect.gen(function*() {
    const settings = yield* smtpSettings.pipe(
      Effect.provide(testSettings({ acceptUrl })),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(environment)),
      Effect.flatMap((found) => Effect.fromOption(found))
    )
    return yield* Layer.build(Layer.merge(MemoryLayer({ acceptUrl }), MailerSmtp(settings)))
  })

describe("MailerSmtp", () => {
  it.effect("delivers the invitation over SMTP: envelope, subject, both parts, and a 256-bit link on the public URL that acceptance takes", () => {
    const logs: Array<string> = []
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const smtp = yield* smtpServer
      const context = yield* buildWithSmtp({ SMTP_URL: `smtp://mailer:${encodeURIComponent(password)}@127.0.0.1:${smtp.port}` })
      yield* Effect.gen(function*() {
        const { caller, welcome } = yield* tenantWithAdmin("acme", "Boss@Acme.test")
        const invitation = yield* createInvitation(caller, invite("Jane.Doe@Example.com", "architect"))
        expect(invitation.status).toBe("PENDING")
        expect((yield* Ref.get(yield* MemoryStore)).mail).toEqual([])

        // The admin's welcome link went first, by the same way.
        expect(smtp.received.map(({ rcptTo }) => rcptTo)).toEqual([["Boss@acme.test"], ["Jane.Doe@example.com"]])
        expect(readMimeMessage(smtp.received[0]!.raw).headers.get("subject")).toBe("Your workspace acme is ready: set your password")
        const delivered = smtp.received[1]
        expect(delivered).toMatchObject({ mailFrom: "no-reply@portfolio.example", rcptTo: ["Jane.Doe@example.com"], user: "mailer" })
        const message = readMimeMessage(delivered!.raw)
        expect(message.headers.get("from")).toBe("Architecture Portfolio <no-reply@portfolio.example>")
        expect(message.headers.get("to")).toBe("Jane.Doe@example.com")
        expect(message.headers.get("subject")).toBe("Boss@Acme.test invited you to join acme on Architecture Portfolio")
        expect(message.headers.get("auto-submitted")).toBe("auto-generated")
        expect(message.headers.get("content-type")).toMatch(/^multipart\/alternative;/)
        expect(message.parts.map((part) => part.headers.get("content-type"))).toEqual([
          "text/plain; charset=utf-8",
          "text/html; charset=utf-8"
        ])

        const [text, html] = message.parts
        const link = /https:\/\/\S+/.exec(text!.body)?.[0] ?? ""
        const token = link.slice(`${acceptUrl}/`.length)
        expect(link).toBe(`${acceptUrl}/${token}`)
        expect(token).toMatch(/^[A-Za-z0-9_-]+$/)
        expect(Buffer.from(token, "base64url").length * 8).toBeGreaterThanOrEqual(256)
        expect(text!.body).toBe([
          "Boss@Acme.test invited you to join the workspace acme as architect.",
          "",
          "Open this link to accept and choose your password:",
          link,
          "",
          "The link works once and expires on Wednesday, 8 July 2026 at 09:00 UTC.",
          "If you did not expect this invitation, ignore this message."
        ].join("\n"))
        expect(html!.body).toBe([
          "<p>Boss@Acme.test invited you to join the workspace <strong>acme</strong> as architect.</p>",
          `<p><a href="${link}">Accept the invitation and choose your password</a></p>`,
          `<p>If the link does not open, copy this address into your browser: ${link}</p>`,
          "<p>The link works once and expires on Wednesday, 8 July 2026 at 09:00 UTC. If you did not expect this invitation, ignore this message.</p>"
        ].join("\n"))

        const member = yield* acceptInvitation(token, Redacted.make("a long enough password"), pageClient)
        expect(member).toEqual(
          new Member({
            userSub: member.userSub,
            userEmail: "Jane.Doe@Example.com",
            arbRole: "architect",
            source: "INVITATION",
            grantedAt: invitation.createdAt
          })
        )
        expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("ACCEPTED")
        expect((yield* listInvitations(caller)).find((i) => i.id === welcome?.invitationId)?.status).toBe("PENDING")

        expect(logs.some((line) => line.includes("mail sent"))).toBe(true)
        expect(logs.filter((line) => line.includes(token) || line.includes(password))).toEqual([])
      }).pipe(Effect.provide(context))
    }).pipe(Effect.provide(captureLogs(logs)))
  })

  it.effect("a recipient the server refuses fails the invitation with Unavailable and keeps nothing; the next one goes through", () => {
    const logs: Array<string> = []
    return Effect.gen(function*() {
      const smtp = yield* smtpServer
      const context = yield* buildWithSmtp({ SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: "People Team <people@acme.example>" })
      yield* Effect.gen(function*() {
        const { caller } = yield* tenantWithAdmin("acme")
        // Only the admin's welcome link so far.
        const before = { listed: yield* listInvitations(caller), stored: (yield* Ref.get(yield* MemoryStore)).invitations }
        expect(smtp.received.map(({ rcptTo }) => rcptTo)).toEqual([["admin@acme.test"]])
        const refused = yield* Effect.flip(createInvitation(caller, invite(refusedRecipient)))
        expect(refused).toEqual(new Unavailable({ detail: "The e-mail could not be sent; retry shortly." }))
        expect(yield* listInvitations(caller)).toEqual(before.listed)
        expect((yield* Ref.get(yield* MemoryStore)).invitations).toEqual(before.stored)
        expect(smtp.received).toHaveLength(1)

        const accepted = yield* createInvitation(caller, invite("jane@example.com"))
        const after = (yield* listInvitations(caller)).map((i) => [i.id, i.status])
        expect(after.sort()).toEqual([[accepted.id, "PENDING"], ...before.listed.map((i) => [i.id, i.status])].sort())
        expect(smtp.received.slice(1).map(({ mailFrom, rcptTo, user }) => ({ mailFrom, rcptTo, user }))).toEqual([
          { mailFrom: "people@acme.example", rcptTo: ["jane@example.com"], user: undefined }
        ])
        expect(readMimeMessage(smtp.received[1]!.raw).headers.get("from")).toBe("People Team <people@acme.example>")
        // The refusal is logged, naming the recipient; neither it nor the delivery names a link.
        expect(logs.filter((line) => line.includes("mail not sent")).join()).toContain(refusedRecipient)
        expect(logs.filter((line) => /\/accept\/|Open this link/.test(line))).toEqual([])
      }).pipe(Effect.provide(context))
    }).pipe(Effect.provide(captureLogs(logs)))
  })

  it.effect("a server that cannot be reached fails the tenant's creation and the invitation with Unavailable and keeps nothing", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const context = yield* buildWithSmtp({ SMTP_URL: `smtp://127.0.0.1:${port}` })
      yield* Effect.gen(function*() {
        // The welcome link of a new admin cannot go: no tenant is created.
        const unsent = yield* Effect.flip(tenantWithAdmin("acme"))
        expect(unsent).toEqual(new Unavailable({ detail: "The e-mail could not be sent; retry shortly." }))
        expect((yield* Ref.get(yield* MemoryStore)).tenants).toEqual([])
        // An admin who already has a password is mailed nothing, so their tenant is created.
        const identity = yield* IdentityProvider
        yield* identity.setPassword((yield* identity.ensureAccount("admin@acme.test")).subject, Redacted.make("the admin's own password"))
        const { caller } = yield* tenantWithAdmin("acme")
        const failure = yield* Effect.flip(createInvitation(caller, invite("jane@example.com")))
        expect(failure).toEqual(new Unavailable({ detail: "The e-mail could not be sent; retry shortly." }))
        expect(yield* listInvitations(caller)).toEqual([])
        expect((yield* Ref.get(yield* MemoryStore)).invitations).toEqual([])
      }).pipe(Effect.provide(context))
    }))

  it.effect("is not used when SMTP_URL is unset", () =>
    Effect.gen(function*() {
      const settings = yield* smtpSettings.pipe(
        Effect.provide(testSettings({ acceptUrl })),
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({ MAIL_FROM: "not even an address" }))
      )
      expect(settings).toEqual(Option.none())
    }))
})
