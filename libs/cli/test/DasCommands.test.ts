import { expect, layer } from "@effect/vitest"
import { DasContentMaxBytes } from "@portfolio/domain"
import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DasFileMaxBytes } from "../src/DasDocument.js"
import { dasId, FakeAdmin, FakeAdminLive } from "./support/FakeAdminApis.js"
import { portfolio, problem, TestOperator } from "./support/RunCli.js"

/** Writes `text` to a file of a fresh directory, runs `use` with its path, then removes it. */
const withFile = <A, E, R>(text: string, use: (path: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "portfolio-das-"))),
    (dir) => {
      const path = join(dir, "das.json")
      writeFileSync(path, text)
      return use(path)
    },
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true }))
  )

const submit = (extra: ReadonlyArray<string>) => portfolio(["das", "submit", "--tenant", "kappa", "--application", "CRM-01", ...extra])

layer(FakeAdminLive)("portfolio das submit", (it) => {
  it.effect("creates the DAS with the file's content, submits it as the operator and prints the record", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "kappa", "--admin-email", "admin@kappa.example"])
      yield* portfolio(["app", "put", "--tenant", "kappa"], JSON.stringify({ code: "CRM-01", name: "CRM" }))
      const content = { context: "CRM for sales", decisions: ["PostgreSQL"] }
      const run = yield* withFile(JSON.stringify(content, null, 2), (file) => submit(["--title", "Target architecture", "--file", file, "--json"]))
      expect(run.stderr).toBe("")
      expect(run.code).toBe(0)
      const id = dasId(state.das.size)
      expect(JSON.parse(run.stdout)).toEqual({
        id,
        applicationCode: "CRM-01",
        title: "Target architecture",
        content,
        status: "SUBMITTED",
        createdAt: "2026-07-01T10:00:00.000Z",
        submittedBy: TestOperator,
        submittedAt: "2026-07-01T10:00:00.000Z"
      })
      expect(state.das.get(id)?.das.status).toBe("SUBMITTED")
    }))

  it.effect("without --file the DAS has no content; without --json it prints lines", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const run = yield* submit(["--title", "Minimal"])
      expect(run.code).toBe(0)
      const id = dasId(state.das.size)
      expect(run.stdout.split("\n")).toEqual([
        `DAS ${id} of CRM-01 submitted in kappa.`,
        "  title:        Minimal",
        "  status:       SUBMITTED",
        `  submitted by: ${TestOperator}`,
        "  content:      (none)"
      ])
      expect(state.das.get(id)?.das.content).toBeNull()
    }))

  it.effect("an unknown application exits 1 with the referential's 404 problem", () =>
    Effect.gen(function*() {
      const run = yield* portfolio(["das", "submit", "--tenant", "kappa", "--application", "NOPE", "--title", "Lost"])
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(JSON.parse(run.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "Application 'NOPE' does not exist."))
    }))

  it.effect("a content file that is not a JSON object, or too large, is refused before calling anything", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const calls = state.callers.length
      for (const text of ["[1, 2]", "\"text\"", "null", "{ not json", JSON.stringify({ text: "x".repeat(DasContentMaxBytes) })]) {
        const run = yield* withFile(text, (file) => submit(["--title", "Refused", "--file", file]))
        expect(run.code).toBe(1)
        const reported = JSON.parse(run.stderr)
        expect(reported.errorCode).toBe("INVALID_REQUEST")
        expect(reported.detail).toContain(`The DAS content must be a JSON object of at most ${DasContentMaxBytes} bytes`)
      }
      const huge = yield* withFile(" ".repeat(DasFileMaxBytes + 1), (file) => submit(["--title", "Huge", "--file", file]))
      expect(JSON.parse(huge.stderr).detail).toContain(`a DAS content file is at most ${DasFileMaxBytes} bytes`)
      expect(state.callers.length).toBe(calls)
    }))

  it.effect("a blank title is a usage error; a missing file too", () =>
    Effect.gen(function*() {
      expect((yield* submit(["--title", ""])).code).toBe(2)
      const missing = yield* submit(["--title", "T", "--file", "/nonexistent/das.json"])
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain("/nonexistent/das.json")
    }))
})
