import { Schema } from "effect"
import { InputText, withoutControls } from "./Text.js"
import { ApplicationCode, Criticality } from "./Application.js"
import { PageQuery } from "./Page.js"
import { DateTimeUtc, Uuid } from "./Wire.js"

export const FunctionId = Uuid.annotate({ identifier: "FunctionId" })

/** A business function with its place in the tree and the codes of its linked applications. */
export class BusinessFunction extends Schema.Class<BusinessFunction>("BusinessFunction")({
  id: FunctionId,
  code: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  parentId: Schema.NullOr(FunctionId),
  level: Schema.Int.annotate({ description: "Depth in the tree; roots are at level 1." }),
  path: Schema.Array(Schema.String).annotate({ description: "Codes from the root down to this function." }),
  applicationCodes: Schema.Array(ApplicationCode),
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}) {}

export interface FunctionTreeNode extends Omit<BusinessFunction, "path"> {
  readonly children: ReadonlyArray<FunctionTreeNode>
}
interface FunctionTreeNodeEncoded extends Omit<typeof BusinessFunction.Encoded, "path"> {
  readonly children: ReadonlyArray<FunctionTreeNodeEncoded>
}

const nodeFields = {
  id: FunctionId,
  code: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  parentId: Schema.NullOr(FunctionId),
  level: Schema.Int,
  applicationCodes: Schema.Array(ApplicationCode),
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}

export const FunctionTreeNode: Schema.Codec<FunctionTreeNode, FunctionTreeNodeEncoded> = Schema.Struct({
  ...nodeFields,
  children: Schema.Array(Schema.suspend((): Schema.Codec<FunctionTreeNode, FunctionTreeNodeEncoded> => FunctionTreeNode))
}).annotate({ identifier: "FunctionTreeNode" })

/** A linked application as the enriched (posi) tree shows it. */
export class LinkedApplication extends Schema.Class<LinkedApplication>("LinkedApplication")({
  code: ApplicationCode,
  name: Schema.String,
  parentCode: Schema.NullOr(ApplicationCode),
  parentName: Schema.NullOr(Schema.String),
  criticality: Criticality
}) {}

export interface PosiTreeNode extends Omit<FunctionTreeNode, "children"> {
  readonly applications: ReadonlyArray<LinkedApplication>
  readonly children: ReadonlyArray<PosiTreeNode>
}
interface PosiTreeNodeEncoded extends Omit<FunctionTreeNodeEncoded, "children"> {
  readonly applications: ReadonlyArray<typeof LinkedApplication.Encoded>
  readonly children: ReadonlyArray<PosiTreeNodeEncoded>
}

export const PosiTreeNode: Schema.Codec<PosiTreeNode, PosiTreeNodeEncoded> = Schema.Struct({
  ...nodeFields,
  applications: Schema.Array(LinkedApplication),
  children: Schema.Array(Schema.suspend((): Schema.Codec<PosiTreeNode, PosiTreeNodeEncoded> => PosiTreeNode))
}).annotate({ identifier: "PosiTreeNode" })

export class ReferentialStats extends Schema.Class<ReferentialStats>("ReferentialStats")({
  functionCount: Schema.Int,
  rootFunctionCount: Schema.Int,
  maxDepth: Schema.Int,
  functionsWithoutApplication: Schema.Int,
  applicationCount: Schema.Int,
  applicationsWithoutFunction: Schema.Int,
  linkCount: Schema.Int,
  averageApplicationsPerFunction: Schema.Finite,
  applicationsByCriticality: Schema.Record(Schema.String, Schema.Int),
  applicationsByDataClassification: Schema.Record(Schema.String, Schema.Int),
  applicationsByStatus: Schema.Record(Schema.String, Schema.Int)
}) {}

export const FunctionSearchQuery = Schema.Struct({
  q: InputText.pipe(
    Schema.check(Schema.isTrimmed()),
    Schema.check(Schema.isMinLength(1)),
    Schema.check(Schema.isMaxLength(200)),
    Schema.annotate({ description: "Case-insensitive text matched against code, name and description." })
  ),
  ...PageQuery.fields
})

/** Admin API input for creating or updating a function. */
export class FunctionInput extends Schema.Class<FunctionInput>("FunctionInput")({
  code: InputText.pipe(Schema.check(Schema.isTrimmed()), Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(64)), withoutControls({ lineBreaks: false })),
  name: InputText.pipe(Schema.check(Schema.isTrimmed()), Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(200)), withoutControls({ lineBreaks: false })),
  description: Schema.optionalKey(Schema.NullOr(InputText.pipe(Schema.check(Schema.isMaxLength(4000)), withoutControls({ lineBreaks: true })))),
  parentId: Schema.optionalKey(Schema.NullOr(FunctionId))
}) {}
