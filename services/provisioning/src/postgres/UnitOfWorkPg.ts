import { SqlClient, SqlError } from "@effect/sql"
import { UnitOfWork } from "@portfolio/domain/ports/provisioning"
import { Effect, Layer } from "effect"

/** One PostgreSQL transaction; the repositories join it because they share the fiber's connection. */
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
