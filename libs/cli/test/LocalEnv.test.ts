import { describe, expect, it } from "@effect/vitest"
import { parseLocalEnv, renderLocalEnv } from "../src/LocalEnv.js"

describe("local.env", () => {
  it("renders and parses back the same entries, comments and blank lines ignored", () => {
    const entries = { INTERNAL_SECRET: "abc=def", DATABASE_URL: "postgres://postgres:password@127.0.0.1:54329/portfolio" }
    const text = renderLocalEnv(entries, ["Written by npm start.", "Keep it private."])
    expect(text).toBe(
      "# Written by npm start.\n# Keep it private.\nINTERNAL_SECRET=abc=def\nDATABASE_URL=postgres://postgres:password@127.0.0.1:54329/portfolio\n"
    )
    expect(Object.fromEntries(parseLocalEnv(`${text}\n  \n# NATS_URL=nats://x\nnot a pair\n`))).toEqual(entries)
  })
})
