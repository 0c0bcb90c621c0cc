/**
 * Where the time of an uncached whole-forest read goes, in process: the one SQL query (with row
 * decoding), the in-memory assembly, the schema encoding and JSON.stringify. Not part of `npm test`.
 *
 *   DATABASE_URL=postgres://... npx tsx services/referential/test/bench/forest-breakdown.ts <tenantId> [rounds]
 */
import { FunctionTreeNode, PosiTreeNode } from "@portfolio/domain"
import { PgLive } from "@portfolio/platform/sql"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { Effect, Schema } from "effect"
import { functionTree, posiTree } from "../../src/domain/FunctionForest.js"
import { getLinkedApplications } from "../../src/usecases/FunctionQueries.js"
import { PgAdaptersLive } from "../../src/adapters/postgres/PgAdapters.js"

const report = (line: string) => process.stdout.write(`${line}\n`)
const [tenantId = "", roundsText = "20"] = process.argv.slice(2)
const rounds = Number(roundsText)

const time = async <A>(label: string, run: () => Promise<A> | A): Promise<A> => {
  const samples: Array<number> = []
  let result!: A
  for (let i = 0; i < rounds; i++) {
    const start = performance.now()
    result = await run()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  report(`${label.padEnd(28)} median ${samples[Math.floor(rounds / 2)]!.toFixed(1)} ms, max ${samples[rounds - 1]!.toFixed(1)} ms`)
  return result
}

const program = Effect.gen(function*() {
  const functions = yield* FunctionRepository
  const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
  const rows = yield* Effect.promise(() => time("tree query + decode", () => run(functions.listAll(tenantId))))
  const tree = yield* Effect.promise(() => time("tree assembly", () => functionTree(rows)))
  const encoded = yield* Effect.promise(() => time("tree schema encode", () => Schema.encodeSync(Schema.Array(FunctionTreeNode))(tree)))
  yield* Effect.promise(() => time("tree JSON.stringify", () => JSON.stringify(encoded)))
  const applications = yield* ApplicationRepository
  const linked = yield* Effect.promise(() =>
    time("linked applications query", () => run(Effect.provideService(getLinkedApplications(tenantId), ApplicationRepository, applications)))
  )
  const posi = yield* Effect.promise(() => time("posi assembly", () => posiTree(tree, linked)))
  const posiEncoded = yield* Effect.promise(() => time("posi schema encode", () => Schema.encodeSync(Schema.Array(PosiTreeNode))(posi)))
  yield* Effect.promise(() => time("posi JSON.stringify", () => JSON.stringify(posiEncoded)))
  report(`${rows.length} functions`)
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(PgAdaptersLive),
    // The service's own pool (DATABASE_URL), which reads int8 as the numbers Rows.ts expects.
    Effect.provide(PgLive)
  )
)
