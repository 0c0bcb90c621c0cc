import { Data } from "effect"

/**
 * What the member asked about is not their tenant's (or does not exist): the pages answer both
 * alike, so that an id of another tenant tells nothing.
 */
export class NotInTenant extends Data.TaggedError("NotInTenant")<{}> {}
