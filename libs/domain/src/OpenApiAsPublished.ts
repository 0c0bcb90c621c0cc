/**
 * The published document (libs/domain/openapi.json) is a contract its readers diff: the move to
 * Effect 4 must not change it. Effect 4's `OpenApi.fromApi` renders the same API in other words
 * (component names, key order, inline integers, filter titles...), so the raw document is put back
 * into the rendering Effect 3 gave before it is finished. Nothing here changes what the API accepts
 * or answers.
 */
type Json = Record<string, any>

const MaxSafe = Number.MAX_SAFE_INTEGER

/** Effect 3's `Schema.Int` component, which every plain integer referred to. */
const IntComponent = { type: "integer", description: "an integer", title: "int" }
const IntRef = { $ref: "#/components/schemas/Int" }

/** The error codes every operation answers (the API-wide problems middleware): Effect 3 listed them first. */
const ApiWideCodes = ["INVALID_REQUEST", "RATE_LIMITED", "UNAVAILABLE"]

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const reorder = (value: Json, first: ReadonlyArray<string>, last: ReadonlyArray<string> = []): Json => {
  const out: Json = {}
  for (const key of first) if (key in value) out[key] = value[key]
  for (const key of Object.keys(value)) if (!first.includes(key) && !last.includes(key)) out[key] = value[key]
  for (const key of last) if (key in value) out[key] = value[key]
  return out
}

const SchemaMaps = new Set(["properties", "patternProperties", "$defs"])
const SchemaValues = new Set(["items", "additionalProperties", "not", "contains", "propertyNames", "anyOf", "allOf", "oneOf", "prefixItems"])
const Constraints = ["pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]

/** A JSON Schema node (and the nodes under it) as Effect 3 wrote it. */
export const effect3Schema = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(effect3Schema)
  if (!isObject(node)) return node
  let schema: Json = Object.fromEntries(Object.entries(node).map(([key, value]) => [
    key,
    SchemaMaps.has(key) && isObject(value)
      ? Object.fromEntries(Object.entries(value).map(([name, property]) => [name, effect3Schema(property)]))
      : SchemaValues.has(key)
      ? effect3Schema(value)
      : value
  ]))
  // Effect 4 writes a check's constraints and annotations as an `allOf` member; Effect 3 merged them in.
  if (Array.isArray(schema.allOf) && schema.allOf.every((member: unknown) => isObject(member) && !("$ref" in member))) {
    const { allOf, ...rest } = schema
    schema = Object.assign(rest, ...allOf)
  }
  // Effect 4 bounds every integer to the safe range; Effect 3 referred to its `Int` component.
  if (schema.type === "integer" && schema.maximum === MaxSafe) {
    const { maximum: _maximum, minimum, type: _type, ...rest } = schema
    if (minimum === -MaxSafe) {
      schema = Object.keys(rest).length === 0
        ? { ...IntRef }
        : rest.description !== undefined && Object.keys(rest).length === 1
        ? { type: "integer", description: rest.description, title: "int" }
        : { type: "integer", ...(minimum === undefined ? {} : { minimum }), maximum: MaxSafe, ...rest }
    } else if (minimum === undefined && rest.exclusiveMinimum === 0) {
      // `Int` checked positive.
      schema = { ...IntRef, ...(rest.description === undefined ? {} : { description: rest.description }), title: "positive", exclusiveMinimum: 0 }
    }
  }
  // A tuple: Effect 3 closed it with `items: false` rather than `maxItems`.
  if (Array.isArray(schema.prefixItems) && schema.items === undefined && schema.maxItems === schema.prefixItems.length) {
    const { maxItems: _maxItems, minItems, prefixItems, type, ...rest } = schema
    schema = { type, minItems, prefixItems, items: false, ...rest }
  }
  // Effect 3 wrote every object's `required` and `properties`, empty ones included (a record's).
  if (schema.type === "object" && (isObject(schema.properties) || isObject(schema.additionalProperties))) {
    schema = { properties: {}, required: [], ...schema }
  }
  if (schema.type === "object") return reorder(schema, ["type", "required", "properties", "additionalProperties"])
  // A string whose last check is a maximum length: Effect 3 titled it after the check.
  if (schema.type === "string" && typeof schema.maxLength === "number" && schema.title === undefined) {
    schema = { title: `maxLength(${schema.maxLength})`, ...schema }
  }
  // A checked schema: Effect 3 wrote its annotations before the checks' constraints.
  const annotated = ["description", "title", "format"].some((key) => key in schema)
  return annotated && Constraints.some((key) => key in schema)
    ? reorder(schema, ["$ref", "type", "description", "title", "examples", "format"])
    : schema
}

/** Every `schema` of the operations (parameters, bodies, responses) as Effect 3 wrote it. */
const effect3Operations = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(effect3Operations)
  if (!isObject(node)) return node
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, key === "schema" ? effect3Schema(value) : effect3Operations(value)])
  )
}

const renameRefs = (node: unknown, names: ReadonlyMap<string, string>): unknown => {
  if (Array.isArray(node)) return node.map((value) => renameRefs(value, names))
  if (!isObject(node)) return node
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      if (key === "$ref" && typeof value === "string") {
        const name = value.replace(/^#\/components\/schemas\//, "")
        const renamed = names.get(name)
        return [key, renamed === undefined ? value : `#/components/schemas/${renamed}`]
      }
      return [key, renameRefs(value, names)]
    })
  )
}

/** A class's component: Effect 4 names it after the class's wire form (`ApplicationEncoded`), Effect 3 after the class. */
export const effect3ComponentNames = (doc: Json): Json => {
  const schemas: Json = doc.components?.schemas ?? {}
  const names = new Map<string, string>()
  for (const name of Object.keys(schemas)) {
    const bare = name.replace(/Encoded$/, "")
    if (bare !== name && !(bare in schemas)) names.set(name, bare)
  }
  const renamed = renameRefs(doc, names) as Json
  renamed.components.schemas = Object.fromEntries(
    Object.entries(renamed.components.schemas as Json).map(([name, schema]) => [names.get(name) ?? name, schema])
  )
  return renamed
}

const problemCode = (schema: unknown): string | undefined =>
  isObject(schema) && typeof schema.$ref === "string" ? /Problem\.(\w+)$/.exec(schema.$ref)?.[1] : undefined

const methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const

/** The operations as Effect 3 wrote them: parameter descriptions, "Success", the API-wide errors first. */
const effect3Operation = (operation: Json): Json => {
  const parameters = (operation.parameters as Array<Json> | undefined)?.map((parameter) => {
    // Without a description of its own, a string whose last check is a maximum length was described by it.
    const schema: Json = parameter.schema?.description === undefined && typeof parameter.schema?.maxLength === "number"
      ? effect3Schema({ ...parameter.schema, description: `a string at most ${parameter.schema.maxLength} character(s) long` }) as Json
      : parameter.schema
    return parameter.description === undefined && schema?.description !== undefined
      ? { ...parameter, schema, description: schema.description }
      : { ...parameter, schema }
  })
  const responses = Object.fromEntries(
    Object.entries(operation.responses as Json).map(([status, response]) => {
      const described = response.description === "<No Content>" ? { ...response, description: "Success" } : response
      if (described.content === undefined) return [status, described]
      const content = Object.fromEntries(
        Object.entries(described.content as Json).map(([media, body]) => {
          const anyOf = body.schema?.anyOf
          if (!Array.isArray(anyOf) || anyOf.every((schema) => problemCode(schema) === undefined)) return [media, body]
          const apiWide = anyOf.filter((schema) => ApiWideCodes.includes(problemCode(schema) ?? ""))
          return [media, { ...body, schema: { ...body.schema, anyOf: [...apiWide, ...anyOf.filter((schema) => !apiWide.includes(schema))] } }]
        })
      )
      return [status, { ...described, content }]
    })
  )
  return { ...operation, ...(parameters === undefined ? {} : { parameters }), responses }
}

/**
 * What Effect 3 wrote otherwise for a few components: titles it derived from the last check of a
 * number (which Effect 4's document no longer tells apart), and `format`s it left out.
 */
const Effect3Components: Record<string, (schema: Json) => Json> = {
  Hours: (schema) => ({ ...schema, title: "lessThanOrEqualTo(1000000)" }),
  MinorUnits: ({ format: _format, ...schema }) => ({ ...schema, title: `between(0, ${MaxSafe})` }),
  InvitationRequest: (schema) => {
    const { format: _format, ...email } = schema.properties.email
    return { ...schema, properties: { ...schema.properties, email } }
  }
}

/** `OpenApi.fromApi`'s document, as Effect 3's `OpenApi.fromApi` gave it. */
export const effect3Document = (spec: Json): Json => {
  const named = effect3ComponentNames(spec)
  const paths = Object.fromEntries(
    Object.entries(effect3Operations(named.paths) as Json).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item as Json).map(([method, operation]) =>
          [method, (methods as ReadonlyArray<string>).includes(method) ? effect3Operation(operation) : operation]
        )
      )
    ])
  )
  const schemas = Object.fromEntries(
    Object.entries(named.components.schemas as Json).map(([name, schema]) => {
      const rendered = effect3Schema(schema) as Json
      const amend = Effect3Components[name]
      return [name, amend === undefined ? rendered : effect3Schema(amend(rendered))]
    })
  )
  const securitySchemes = Object.fromEntries(
    Object.entries((named.components.securitySchemes ?? {}) as Json).map(([name, scheme]) => [
      name,
      scheme.scheme === "Bearer" ? { ...scheme, scheme: "bearer" } : scheme
    ])
  )
  return { ...named, paths, components: { ...named.components, schemas: { ...schemas, Int: IntComponent }, securitySchemes } }
}

const refName = (value: unknown): string | undefined =>
  typeof value === "string" && value.startsWith("#/components/schemas/") ? value.slice("#/components/schemas/".length) : undefined

/**
 * The components in the order Effect 3 met them: walking the operations (body, successes, the
 * API-wide errors, then the others), then the shared `Problem`, then the webhooks' events.
 */
export const effect3ComponentOrder = (doc: Json): Json => {
  const schemas: Json = doc.components.schemas
  const order: Array<string> = []
  const visit = (node: unknown, skip: ReadonlySet<string> = new Set()): void => {
    if (Array.isArray(node)) return node.forEach((value) => visit(value, skip))
    if (!isObject(node)) return
    for (const [key, value] of Object.entries(node)) {
      const name = key === "$ref" ? refName(value) : undefined
      if (name !== undefined) {
        if (skip.has(name) || order.includes(name) || !(name in schemas)) continue
        order.push(name)
        visit(schemas[name], skip)
      } else {
        visit(value, skip)
      }
    }
  }
  const late = new Set(["Problem"])
  for (const item of Object.values(doc.paths as Json)) {
    // In the order the endpoints are declared, which is the order of the item's keys.
    for (const [method, operation] of Object.entries(item as Json)) {
      if (!(methods as ReadonlyArray<string>).includes(method)) continue
      visit(operation.parameters, late)
      visit(operation.requestBody, late)
      const responses = Object.entries(operation.responses as Json)
      const successes = responses.filter(([status]) => status.startsWith("2"))
      const errors = responses.filter(([status]) => !status.startsWith("2"))
      visit(successes.map(([, response]) => response), late)
      const refs = errors.flatMap(([, response]) => Object.values((response.content ?? {}) as Json).map((body) => body.schema))
      const flat = refs.flatMap((schema) => (Array.isArray(schema?.anyOf) ? schema.anyOf : [schema]))
      visit(flat.filter((schema) => ApiWideCodes.includes(problemCode(schema) ?? "")), late)
      visit(flat.filter((schema) => ["UNAUTHENTICATED", "INSUFFICIENT_SCOPE"].includes(problemCode(schema) ?? "")), late)
      visit(flat, late)
    }
  }
  visit({ $ref: "#/components/schemas/Problem" })
  visit(doc.webhooks)
  const rest = Object.keys(schemas).filter((name) => !order.includes(name))
  return { ...doc, components: { ...doc.components, schemas: Object.fromEntries([...order, ...rest].map((name) => [name, schemas[name]])) } }
}
