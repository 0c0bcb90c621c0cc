import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { type SmtpSettings, smtpSettings, smtpTransportOptions } from "../../src/mail/SmtpMailer.js"
import { testSettings } from "../support/Memory.js"

const read = (environment: Record<string, string>) =>
  smtpSettings.pipe(
    Effect.provide(testSettings({ acceptUrl: "https://portfolio.example/accept" })),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(environment))))
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
      for (const from of ["people", "a@acme.example, b@acme.example", "Team: a@acme.example;", "People <>"]) {
        expect(yield* refusal({ SMTP_URL: "smtp://127.0.0.1", MAIL_FROM: from })).toBe(message)
      }
    }))
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
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
      auth: { user: "mailer", pass: "p@ss:word" }
    })
    expect(smtpTransportOptions(settings({ auth, secure: true })).requireTLS).toBe(false)
    expect(smtpTransportOptions(settings({})).requireTLS).toBe(false)
    for (const host of ["localhost", "127.0.0.1", "::1"]) {
      expect(smtpTransportOptions(settings({ auth, host })).requireTLS).toBe(false)
    }
  })
})
