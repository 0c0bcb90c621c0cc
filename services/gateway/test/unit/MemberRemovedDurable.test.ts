import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { memberRemovedDurableConfig } from "../../src/adapters/nats/MemberRemovedConsumer.js"

const withUrl = (url: string) => Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { DATABASE_URL: url } }))

/** The durable of a gateway started with this DATABASE_URL. */
const memberRemovedDurable = (url: string) => Effect.runSync(memberRemovedDurableConfig.pipe(withUrl(url)))

describe("the member.removed durable of a deployment", () => {
  const base = memberRemovedDurable("postgres://gateway:secret@db.internal:5432/portfolio")

  it("is shared by replicas of one database, whatever their credentials, options or spelling of the host", () => {
    expect([
      memberRemovedDurable("postgres://other-user:other-secret@db.internal:5432/portfolio"),
      memberRemovedDurable("postgresql://gateway@DB.internal/portfolio?sslmode=require"),
      memberRemovedDurable("postgres://db.internal/portfolio")
    ]).toEqual([base, base, base])
  })

  it("differs from one database to another, so that another deployment on the same NATS never takes this one's events", () => {
    const others = [
      memberRemovedDurable("postgres://gateway:secret@db.internal:5432/bb_0a1b2c3d4e5f"),
      memberRemovedDurable("postgres://gateway:secret@db.internal:5433/portfolio"),
      memberRemovedDurable("postgres://gateway:secret@db.staging:5432/portfolio"),
      memberRemovedDurable("postgresql:///portfolio?host=/var/run/postgresql")
    ]
    expect(new Set([base, ...others]).size).toBe(5)
  })

  it("is a valid NATS consumer name that shows nothing of the connection string", () => {
    expect(base).toMatch(/^gateway-member-removed-[0-9a-f]{16}$/)
    expect(base).not.toContain("secret")
    expect(base).not.toContain("db.internal")
  })

  it.effect("is read from DATABASE_URL", () =>
    Effect.gen(function*() {
      expect(yield* memberRemovedDurableConfig.pipe(withUrl("postgres://gateway:secret@db.internal:5432/portfolio"))).toBe(base)
    }))

  it.effect("stops the start with a message naming DATABASE_URL when it is not a URL", () =>
    Effect.gen(function*() {
      const failure = yield* memberRemovedDurableConfig.pipe(withUrl("host=db dbname=portfolio"), Effect.flip)
      expect(String(failure)).toContain("DATABASE_URL")
      expect(String(failure)).toContain("must be a postgres:// URL")
      expect(String(failure)).not.toContain("dbname=portfolio")
    }))
})
