/**
 * Where the time of an uncached whole-forest read goes, in process: the walk of the forest alone
 * (the statement, its cursor's batches and their decoding), then each answer written from a walk
 * (the tree's and the flat list's JSON, posi's deflated template). Not part of `npm test`.
 *
 *   DATABASE_URL=postgres://... npx tsx services/referential/test/bench/forest-breakdown.ts <tenantId> [rounds]
 */
import { PgLive } from "@portfolio/platform/sql"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { Effect, Stream } from "effect"
import { PgAdaptersLive } from "../../src/adapters/postgres/PgAdapters.js"
import { flatJsonOfWalk, posiTemplate, treeJson } from "../../src/adapters/http/WireJson.js"
import { locating } from "../../src/domain/FunctionForest.js"

const report = (line: string) => process.stdout.write(`${line}\n`)
const [tenantId = "", roundsText = "20"] = process.argv.slice(2)
const rounds = Number(roundsText)

const time = async <A>(label: string, run: () => Promise<A>): Promise<A> => {
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
  const walk = () => functions.walk(tenantId)
  const bytes = (pieces: Stream.Stream<Uint8Array>) => Effect.runPromise(Stream.runFold(pieces, () => 0, (n, piece) => n + piece.byteLength))
  const count = yield* Effect.promise(() => time("walk (statement + decode)", () => Effect.runPromise(Stream.runFold(walk(), () => 0, (n, batch) => n + batch.length))))
  const tree = yield* Effect.promise(() => time("tree JSON from the walk", () => bytes(treeJson(walk()))))
  const flat = yield* Effect.promise(() => time("flat JSON from the walk", () => bytes(flatJsonOfWalk(Stream.suspend(() => {
    const locate = locating()
    return Stream.map(walk(), (batch) => batch.map(locate))
  })))))
  const template = yield* Effect.promise(() => time("posi template from the walk", () => Effect.runPromise(posiTemplate(walk()))))
  report(`${count} functions; tree ${tree} bytes, flat ${flat} bytes, posi template ${template.byteLength} bytes packed`)
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(PgAdaptersLive),
    // The service's own pool (DATABASE_URL), which reads int8 as the numbers Rows.ts expects.
    Effect.provide(PgLive)
  )
)
