import { Context, type Effect } from "effect"

/**
 * Runs an effect so that every write through the provisioning ports inside it commits together
 * or not at all (a failure rolls everything back).
 */
export interface UnitOfWorkShape {
  readonly run: <A, E, R>(work: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export class UnitOfWork extends Context.Tag("@portfolio/domain/ports/provisioning/UnitOfWork")<UnitOfWork, UnitOfWorkShape>() {}
