import { Schema } from "effect"
import { ApplicationCode, FunctionId } from "@portfolio/domain"

/** The fields of a business function that its own writes change. */
export const FunctionFields = Schema.Struct({
  id: FunctionId,
  code: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  parentId: Schema.NullOr(FunctionId),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
})
export type FunctionFields = typeof FunctionFields.Type

/** A function with the codes of its linked applications, sorted by code. */
export const FunctionRecord = Schema.Struct({
  ...FunctionFields.fields,
  applicationCodes: Schema.Array(ApplicationCode)
})
export type FunctionRecord = typeof FunctionRecord.Type

/** A function as a walk of the forest in tree order meets it: with its depth, a root's 1. */
export interface PlacedFunction extends FunctionRecord {
  readonly level: number
}

/** A function with the codes of its ancestors and itself, root first. */
export const LocatedFunction = Schema.Struct({
  ...FunctionRecord.fields,
  path: Schema.Array(Schema.String)
})
export type LocatedFunction = typeof LocatedFunction.Type

export interface FunctionLink {
  readonly functionId: string
  readonly applicationCode: string
}
