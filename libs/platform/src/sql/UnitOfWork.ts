import { SqlClient, SqlError } from "effect/sql"
import { Context, Effect, Layer } from "effect"

/**
 * Runs an effect so that every write through a service's repositories inside it commits together
 * or not at all (a failure rolls everything back). Every service names its transactions this way.
 */
export interface UnitOfWorkShape {
  readonly run: <A, Err, R>(work: Effect.Effect<A, Err, R>) => Effect.Effect<A, Err, R>
}

export class UnitOfWork extends Context.Service<UnitOfWork, UnitOfWorkShape>()("@portfolio/platform/UnitOfWork") {}

/**
 * One PostgreSQL transaction; the repositories join it because they share the fiber's connection.
 * A storage failure is not an expected outcome of a use case: it becomes a defect (a logged 500,
 * or a 503 when the database cannot be reached).
 */
export const UnitOfWorkPg = Layer.effect(
  UnitOfWork,
  Effect.map(SqlClient.SqlClient, (sql) =>
    UnitOfWork.of({
      run: (work) =>
        sql.withTransaction(work).pipe(
          Effect.catchIf((error): error is SqlError.SqlError => error instanceof SqlError.SqlError, Effect.die)
        )
    }))
)
