import { Options } from "@effect/cli"
import { TenantSlug } from "@portfolio/domain"

/** The options every group of commands shares, so that `--json` and `--tenant` read the same everywhere. */
export const json = Options.boolean("json").pipe(Options.withDescription("Print the result as JSON on stdout."))

export const tenantOption = Options.text("tenant").pipe(
  Options.withSchema(TenantSlug),
  Options.withDescription("Slug of the tenant.")
)
