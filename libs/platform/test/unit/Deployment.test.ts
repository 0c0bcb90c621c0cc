import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { DeploymentIdConfig, deploymentIdOf } from "../../src/config/Deployment.js"

describe("the deployment id", () => {
  const base = deploymentIdOf("postgres://gateway:secret@db.internal:5432/portfolio")

  it("is the same for every replica of one database, whatever the credentials, options or spelling of the host", () => {
    expect([
      deploymentIdOf("postgres://other:pw@DB.internal/portfolio?sslmode=require"),
      deploymentIdOf("postgresql://db.internal:5432/portfolio")
    ]).toEqual([base, base])
  })

  it("differs between databases, and shows nothing of the connection string", () => {
    expect(deploymentIdOf("postgres://gateway:secret@db.internal:5432/staging")).not.toBe(base)
    expect(deploymentIdOf("postgresql:///portfolio?host=/var/run/postgresql")).not.toBe(base)
    expect(base).toMatch(/^[0-9a-f]{16}$/)
  })

  it.effect("is read from DATABASE_URL, and a value that is not a URL stops the start naming the variable", () =>
    Effect.gen(function*() {
      const withUrl = (url: string) => Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({ DATABASE_URL: url }))
      expect(yield* DeploymentIdConfig.pipe(withUrl("postgres://db.internal:5432/portfolio"))).toBe(base)
      const failure = yield* DeploymentIdConfig.pipe(withUrl("host=db dbname=portfolio"), Effect.flip)
      expect(String(failure)).toContain("DATABASE_URL")
      expect(String(failure)).not.toContain("dbname=portfolio")
    }))
})
