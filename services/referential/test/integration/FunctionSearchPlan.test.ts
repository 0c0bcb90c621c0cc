import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect, Option } from "effect"
import { searchFunctions, searchFunctionsPage } from "../../src/usecases/FunctionQueries.js"
import { tenantA, tenantB } from "../support/Fixtures.js"
import { FreshReferentialPg } from "../support/FreshDatabase.js"
import { capturing, planOf } from "../support/Plans.js"

/** The index names of the plan PostgreSQL makes for the search's statement (not run, no timing). */
const searchPlan = <A, E, R>(search: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { statements } = yield* capturing(search)
    const all = yield* planOf(statements.find(([text]) => text.includes("WITH RECURSIVE matched"))!)
    return { indexes: new Set(all.flatMap((node) => node["Index Name"] ?? [])), types: new Set(all.map((node) => node["Node Type"])) }
  })

const trigramIndexes = ["functions_code_trigrams", "functions_name_trigrams", "functions_description_trigrams"]

describe("function search on PostgreSQL", () => {
  layer(FreshReferentialPg, { timeout: 120_000 })((it) => {
    it.effect("reads the three trigram indexes, not every function of the tenant, for a term of three characters", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // A tenant of 20,000 functions (another of 1,000 with nothing to find), 3 to find by code,
        // name or description. A smaller tenant is rightly read whole: its rows cost less than the
        // trigram indexes of every tenant.
        yield* sql.unsafe(`
          INSERT INTO referential.functions (id, tenant_id, code, name, description, parent_id, created_at, updated_at)
          SELECT gen_random_uuid(), t.tenant_id, 'BF-' || lpad(n::text, 5, '0'), 'Manage payments ' || n,
            CASE WHEN n % 2 = 0 THEN 'Settles orders ' || n END, NULL, now(), now()
          FROM (VALUES ('${tenantA}'::uuid, 20000), ('${tenantB}'::uuid, 1000)) t (tenant_id, size), generate_series(1, t.size) n`)
        const [root] = yield* sql<{ readonly id: string }>`SELECT id FROM referential.functions WHERE tenant_id = ${tenantA} AND code = 'BF-00001'`
        yield* sql`
          INSERT INTO referential.functions (id, tenant_id, code, name, description, parent_id, created_at, updated_at) VALUES
            (gen_random_uuid(), ${tenantA}, 'ZEBRA-1', 'Stripes', NULL, ${root!.id}, now(), now()),
            (gen_random_uuid(), ${tenantA}, 'BF-Z2', 'Feeds the zebras', NULL, NULL, now(), now()),
            (gen_random_uuid(), ${tenantA}, 'BF-Z3', 'Horses', 'Not a Zebra', ${root!.id}, now(), now())`
        // What autovacuum does after such a batch (it is off on the test cluster): statistics, and
        // the rows inserted since the trigram indexes were built moved from their pending lists.
        yield* sql`VACUUM ANALYZE referential.functions`

        const found = yield* searchFunctions(tenantA, "zebra")
        expect(found.map((fn) => [fn.code, fn.path])).toEqual([
          ["BF-Z2", ["BF-Z2"]],
          ["BF-Z3", ["BF-00001", "BF-Z3"]],
          ["ZEBRA-1", ["BF-00001", "ZEBRA-1"]]
        ])
        const whole = yield* searchPlan(searchFunctions(tenantA, "zebra"))
        expect(trigramIndexes.filter((index) => whole.indexes.has(index))).toEqual(trigramIndexes)
        expect(whole.types.has("BitmapOr")).toBe(true)
        expect(whole.types.has("Seq Scan")).toBe(false)

        const page = yield* searchPlan(searchFunctionsPage(tenantA, "zebra", { limit: 2 }))
        expect(trigramIndexes.filter((index) => page.indexes.has(index))).toEqual(trigramIndexes)
        const first = yield* searchFunctionsPage(tenantA, "zebra", { limit: 2 })
        const second = yield* searchFunctionsPage(tenantA, "zebra", { limit: 2, cursor: Option.getOrThrow(first.next) })
        expect([...first.items, ...second.items].map((fn) => fn.code)).toEqual(["BF-Z2", "BF-Z3", "ZEBRA-1"])
        expect(yield* searchFunctions(tenantB, "zebra")).toEqual([])
      }))

    it.effect("answers a term of one or two characters, which has no trigram, from the tenant's rows", () =>
      Effect.gen(function*() {
        expect((yield* searchFunctions(tenantA, "z2")).map((fn) => fn.code)).toEqual(["BF-Z2"])
        expect((yield* searchFunctionsPage(tenantA, "z", { limit: 2 })).items.map((fn) => fn.code)).toEqual(["BF-Z2", "BF-Z3"])
        const short = yield* searchPlan(searchFunctions(tenantA, "z2"))
        expect(trigramIndexes.some((index) => short.indexes.has(index))).toBe(false)
      }))
  })
})
