import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { TenantSlug } from "@portfolio/domain"
import { Effect, Either } from "effect"

/** The options every group of commands shares, so that `--json` and `--tenant` read the same everywhere. */
export const json = Options.boolean("json").pipe(Options.withDescription("Print the result as JSON on stdout."))

export const tenantOption = Options.text("tenant").pipe(
  Options.withSchema(TenantSlug),
  Options.withDescription("Slug of the tenant.")
)

/** A flag read by one of the pure parsers: what they refuse is a usage error, explained before any call. */
export const parsed = <A>(parse: (text: string) => Either.Either<A, string>) => (text: string) =>
  Either.match(parse(text), {
    onLeft: (message) => Effect.fail(ValidationError.invalidValue(HelpDoc.p(message))),
    onRight: Effect.succeed
  })
