import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Option, Redacted } from "effect"
import { SmtpSendDeadline, smtpTransportOptions } from "../../src/adapters/mail/MailerSmtp.js"
import { mailTransport, parseMailbox, type SmtpSettings, smtpSettings } from "../../src/Config.js"
import { testSettings } from "../support/Memory.js"

const read = (environment: Record<string, string>) =>
  smtpSettings.pipe(
    Effect.provide(testSettings({ acceptUrl: "https://portfolio.example/accept" })),
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(environment))
  )

const refusal = (environment: Record<string, string>) => Effect.map(Effect.flip(read(environment)), String)

const defaultFrom = { name: "Architecture Portfolio", address: "no-reply@portfolio.example" }

describe("SMTP settings", () => {
  it.effect("reads scheme, host, port and percent-decoded credentials; MAIL_FROM defaults to no-reply on the public host", () =>
    Effect.gen(function*() {
      const secure = Option.getOrThrow(yield* read({ SMTP_URL: "smtps://mailer%40acme:p%40ss%3Aword@mail.example.com" }))
      expect(secure.from).toEqual(defaultFrom)
      expect(secure.server.host).toBe("mail.example.com")
      expect(secure.server.port).toEqual(Option.none())
      expect(secure.server.secure).toBe(true)
      const auth = Option.getOrThrow(secure.server.auth)
      expect([auth.user, Redacted.value(auth.pass)]).toEqual(["mailer@acme", "p@ss:word"])

      const plain = Option.getOrThrow(yield* read({ SMTP_URL: "smtp://[::1]:2525/", MAIL_FROM: "people@acme.example" }))
      expect(plain).toEqual({
        server: { host: "::1", port: Option.some(2525), secure: false, auth: Option.none() },
        from: { name: "", address: "people@acme.example" }
      })
    }))

  it.effect("refuses a bad SMTP_URL with a message that never repeats the URL", () =>
    Effect.gen(function*() {
      const shape = "must be smtp://[user:password@]host[:port] or smtps://[user:password@]host[:port]"
      expect(yield* refusal({ SMTP_URL: "mail.example.com:secret" })).toBe(`(Invalid data at SMTP_URL: "${shape} (another scheme)")`)
      expect(yield* refusal({ SMTP_URL: "://user:secret@mail.example.com" })).toBe(`(Invalid data at SMTP_URL: "${shape} (not a URL)")`)
      expect(yield* refusal({ SMTP_URL: "https://user:secret@mail.example.com" })).toBe(`(Invalid data at SMTP_URL: "${shape} (another scheme)")`)
      expect(yield* refusal({ SMTP_URL: "smtp://user:secret@mail.example.com/relay" })).toBe(`(Invalid data at SMTP_URL: "${shape} (no path, query or fragment)")`)
      expect(yield* refusal({ SMTP_URL: "smtp://user:secret@mail.example.com?pool=false" })).toBe(`(Invalid data at SMTP_URL: "${shape} (no path, query or fragment)")`)
      expect(yield* refusal({ SMTP_URL: "smtp://:secret@mail.example.com" })).toBe(`(Invalid data at SMTP_URL: "${shape} (a password without a user)")`)
      expect(yield* refusal({ SMTP_URL: "smtp://user:secret@:25" })).toBe(`(Invalid data at SMTP_URL: "${shape} (not a URL)")`)
      expect(yield* refusal({ SMTP_URL: "smtp:user:secret@mail.example.com" })).toBe(`(Invalid data at SMTP_URL: "${shape} (no host)")`)
    }))

  it.effect("refuses a MAIL_FROM that is not exactly one address", () =>
    Effect.gen(function*() {
      const message = `(Invalid data at MAIL_FROM: "must be one address, such as no-reply@example.com or "Architecture Portfolio <no-reply@example.com>"")`
      for (const from of [
        "people", "a@acme.example, b@acme.example", "Team: a@acme.example;", "People <>", "People <people>",
        "a@b@acme.example", "people@acme.example (People)", "Doe, Jane <jane@acme.example>", "\"Unclosed <jane@acme.example>",
        "People <a@acme.example> <b@acme.example>", "<a@acme.example>, b@acme.example"
      ]) {
        expect(yield* refusal({ SMTP_URL: "smtp://127.0.0.1", MAIL_FROM: from })).toBe(message)
      }
    }))
})

describe("a sender's mailbox (MAIL_FROM)", () => {
  it("takes an address alone, or a display name in plain words or quoted before one in angle brackets", () => {
    expect(parseMailbox("people@acme.example")).toEqual({ name: "", address: "people@acme.example" })
    expect(parseMailbox("  People Team <people@acme.example> ")).toEqual({ name: "People Team", address: "people@acme.example" })
    expect(parseMailbox("J. Doe <j.doe@acme.example>")).toEqual({ name: "J. Doe", address: "j.doe@acme.example" })
    expect(parseMailbox("<people@acme.example>")).toEqual({ name: "", address: "people@acme.example" })
    expect(parseMailbox('"Doe, Jane" <jane@acme.example>')).toEqual({ name: "Doe, Jane", address: "jane@acme.example" })
    expect(parseMailbox('"The \\"Best\\" Team" <team@acme.example>')).toEqual({ name: 'The "Best" Team', address: "team@acme.example" })
    expect(parseMailbox("Équipe Portefeuille <no-reply@acme.example>")).toEqual({ name: "Équipe Portefeuille", address: "no-reply@acme.example" })
  })
})

describe("SMTP transport options", () => {
  const settings = (url: Partial<SmtpSettings["server"]>): SmtpSettings => ({
    server: { host: "mail.example.com", port: Option.none(), secure: false, auth: Option.none(), ...url },
    from: defaultFrom
  })
  const auth = Option.some({ user: "mailer", pass: Redacted.make("p@ss:word") })

  it("pools connections, bounds every wait, and demands STARTTLS before credentials leave the machine", () => {
    expect(smtpTransportOptions(settings({ auth, port: Option.some(587) }))).toEqual({
      pool: true,
      host: "mail.example.com",
      port: 587,
      secure: false,
      requireTLS: true,
      connectionTimeout: 5_000,
      greetingTimeout: 5_000,
      socketTimeout: 10_000,
      logger: false,
      debug: false,
      auth: { user: "mailer", pass: "p@ss:word" }
    })
    expect(smtpTransportOptions(settings({ auth, secure: true })).requireTLS).toBe(false)
    expect(smtpTransportOptions(settings({})).requireTLS).toBe(false)
    for (const host of ["localhost", "127.0.0.1", "::1"]) {
      expect(smtpTransportOptions(settings({ auth, host })).requireTLS).toBe(false)
    }
  })
})

describe("mail transport", () => {
  const transport = (environment: Record<string, string>) =>
    mailTransport.pipe(
      Effect.provide(testSettings({ acceptUrl: "https://portfolio.example/accept" })),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(environment))
    )

  it.effect("sends through SMTP by default and refuses to start without SMTP_URL rather than log magic links", () =>
    Effect.gen(function*() {
      const smtp = yield* transport({ SMTP_URL: "smtps://mail.example.com" })
      expect(smtp._tag === "Smtp" && smtp.settings.server.host).toBe("mail.example.com")
      expect((yield* transport({ MAIL_TRANSPORT: "smtp", SMTP_URL: "smtp://127.0.0.1:2525" }))._tag).toBe("Smtp")
      const missing = String(yield* Effect.flip(transport({})))
      expect(missing).toBe(
        "(Missing data at SMTP_URL: \"is required to send invitation mail; for local use only, MAIL_TRANSPORT=local keeps mail (magic links included) in the database, encrypted, for `portfolio mail list` instead\")"
      )
      expect(String(yield* Effect.flip(transport({ MAIL_TRANSPORT: "smtp" })))).toBe(missing)
    }))

  it.effect("keeps mail locally only when MAIL_TRANSPORT=local says so, and refuses an unknown or contradictory setting", () =>
    Effect.gen(function*() {
      expect(yield* transport({ MAIL_TRANSPORT: "local" })).toEqual({ _tag: "Local" })
      const both = String(yield* Effect.flip(transport({ MAIL_TRANSPORT: "local", SMTP_URL: "smtp://user:secret@mail.example.com" })))
      expect(both).toContain("MAIL_TRANSPORT")
      expect(both).not.toContain("secret")
      expect(String(yield* Effect.flip(transport({ MAIL_TRANSPORT: "log", SMTP_URL: "smtp://mail.example.com" })))).toContain("MAIL_TRANSPORT")
    }))
})

describe("SMTP send deadline", () => {
  it("ends a send well before the gateway's upstream timeout (25 s by default), so the caller gets provisioning's 503", () => {
    expect(Duration.toSeconds(SmtpSendDeadline)).toBeLessThanOrEqual(15)
    const { connectionTimeout, greetingTimeout, socketTimeout } = smtpTransportOptions({
      server: { host: "mail.example.com", port: Option.none(), secure: true, auth: Option.none() },
      from: defaultFrom
    })
    expect(connectionTimeout + greetingTimeout + socketTimeout).toBeLessThanOrEqual(Duration.toMillis(SmtpSendDeadline) + 5_000)
  })
})
