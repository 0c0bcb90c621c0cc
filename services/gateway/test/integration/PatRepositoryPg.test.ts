import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PatRepository } from "../../src/ports/PatRepository.js"
import { newRecord, PatRepositoryPgFresh } from "../support/PatRepositories.js"

// What every PatRepository does is in PatRepository.contract.test.ts; here, what only this one can show.
describe("PatRepositoryPg (fresh database)", () => {
  layer(PatRepositoryPgFresh("it_gw"), { timeout: 60_000 })((it) => {
    it.effect("stores only the hash and prefix, never the token", () =>
      Effect.gen(function*() {
        const store = yield* PatRepository
        const sql = yield* SqlClient.SqlClient
        const { pat, record } = newRecord()
        yield* store.insert(record)
        const rows = yield* sql<{ readonly row: string }>`SELECT row_to_json(t)::text AS row FROM gateway.personal_access_tokens t WHERE id = ${record.id}`
        expect(rows[0]!.row).not.toContain(pat.token.slice(10))
        expect(rows[0]!.row).toContain(`"token_prefix":"${pat.token.slice(0, 10)}"`)
      }))
  })
})
