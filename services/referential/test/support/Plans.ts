import { SqlClient, Statement } from "effect/sql"
import { Effect } from "effect"

/** The statements `effect` runs, compiled as PostgreSQL receives them, with what it answers. */
export const capturing = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const statements: Array<readonly [string, ReadonlyArray<unknown>]> = []
    const result = yield* effect.pipe(Effect.provideService(Statement.CurrentTransformer, (statement) =>
      Effect.sync(() => {
        statements.push(statement.compile())
        return statement
      })
    ))
    return { result, statements }
  })

export interface PlanNode {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}
const nodes = (node: PlanNode): ReadonlyArray<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

/** Every node of the plan PostgreSQL makes for a captured statement (`EXPLAIN`: not run, no timing). */
export const planOf = ([text, params]: readonly [string, ReadonlyArray<unknown>]) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql.unsafe<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${text}`, params)
    const [explained] = Object.values(row!) as [ReadonlyArray<{ readonly Plan: PlanNode }>]
    return nodes(explained[0]!.Plan)
  })
