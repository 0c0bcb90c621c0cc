import { CliError, Flag } from "effect/cli"
import { TenantSlug } from "@portfolio/domain"
import { Effect, FileSystem, Option, Result } from "effect"

/** A flag that is on when given and off otherwise (a bare `Flag.Boolean` is a required flag). */
export const switchFlag = (name: string) => Flag.Boolean(name).pipe(Flag.withDefault(false))

/** The options every group of commands shares, so that `--json` and `--tenant` read the same everywhere. */
export const json = switchFlag("json").pipe(Flag.withDescription("Print the result as JSON on stdout."))

export const tenantOption = Flag.String("tenant").pipe(
  Flag.withSchema(TenantSlug),
  Flag.withDescription("Slug of the tenant.")
)

/** A usage error in the CLI's own words: the parser writes the sentence as it is on stderr. */
export const usageError = (message: string) => new CliError.ValidationError({ message })

/** A flag read by one of the pure parsers: what they refuse is a usage error, explained before any call. */
export const parsed = <A>(parse: (text: string) => Result.Result<A, string>) => (text: string) =>
  Result.match(parse(text), {
    onFailure: (message) => Effect.fail(usageError(message)),
    onSuccess: Effect.succeed
  })

/**
 * A flag taking one of `literals`. A value outside them is refused in the words operators and
 * scripts already know ("Expected one of the following cases: read, write"), with the value given.
 */
export const choice = <const Literals extends ReadonlyArray<string>>(name: string, literals: Literals) => {
  const isChoice = (value: string): value is Literals[number] => literals.includes(value)
  return Flag.String(name).pipe(
    Flag.withMetavar(literals.join(" | ")),
    Flag.mapEffect((value) =>
      isChoice(value)
        ? Effect.succeed(value)
        : Effect.fail(
          new CliError.InvalidValue({
            option: name,
            value,
            expected: `Expected one of the following cases: ${literals.join(", ")}`,
            kind: "flag"
          })
        )
    )
  )
}

/**
 * A flag naming a file, kept as given (relative paths stay relative in what the commands say). A
 * path that exists must be a regular file; `mustExist` also refuses one that does not exist.
 */
export const fileOption = (name: string, options: { readonly mustExist: boolean }) =>
  Flag.String(name).pipe(
    Flag.withMetavar("file"),
    Flag.mapEffect((path) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const exists = yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false))
        if (!exists) return options.mustExist ? yield* usageError(`Path '${path}' must exist`) : path
        const info = yield* fs.stat(path).pipe(Effect.option)
        return Option.exists(info, ({ type }) => type === "File") ? path : yield* usageError(`Expected path '${path}' to be a regular file`)
      })
    )
  )

/** A flag naming a file that must exist. */
export const existingFile = (name: string) => fileOption(name, { mustExist: true })
