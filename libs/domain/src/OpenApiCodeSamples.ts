type Json = Record<string, any>

const JsonMedia = "application/json"

const exampleValue = (schema: Json | undefined, doc: Json, depth = 0): unknown => {
  if (schema === undefined || depth > 4) return "string"
  if (typeof schema.$ref === "string") return exampleValue(doc.components.schemas[schema.$ref.split("/").pop()!], doc, depth + 1)
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (schema.format === "email") return "jane.doe@example.com"
  if (schema.type === "object") {
    const required: ReadonlyArray<string> = schema.required ?? []
    return Object.fromEntries(required.map((name) => [name, exampleValue(schema.properties?.[name], doc, depth + 1)]))
  }
  if (schema.type === "integer" || schema.type === "number") return 1
  if (schema.type === "boolean") return true
  return "string"
}

/** Example values of path parameters, by name, so that the code samples run as written. */
const pathExamples: Record<string, string> = {
  code: "CRM-01",
  id: "3f1c6f0e-8b5a-4f7e-9a51-2f4f8f3f0a11",
  userSub: "auth0|64b0c1d2e3f4"
}
const invitationExample = { email: "jane.doe@example.com", arbRole: "architect" }

/** The curl and fetch samples of one operation (`x-codeSamples`), runnable as written with a token in PORTFOLIO_TOKEN. */
export const codeSamples = (method: string, path: string, operation: Json, doc: Json, baseUrl: string) => {
  const parameters: ReadonlyArray<Json> = operation.parameters ?? []
  const concretePath = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(pathExamples[name] ?? "example"))
  const query = parameters
    .filter((p) => p.in === "query" && (p.required || p.example !== undefined))
    .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(p.example ?? (p.name === "q" ? "billing" : "example")))}`)
  const url = `${baseUrl}${concretePath}${query.length > 0 ? `?${query.join("&")}` : ""}`
  const bodySchema = operation.requestBody?.content?.[JsonMedia]?.schema
  const body = bodySchema === undefined
    ? undefined
    : JSON.stringify(path === "/tenant/invitations" ? invitationExample : exampleValue(bodySchema, doc))
  const upper = method.toUpperCase()
  const hasJsonAnswer = Object.entries(operation.responses ?? {}).some(([status, r]) => status.startsWith("2") && (r as Json).content?.[JsonMedia])
  const curl = [
    `curl -sS${upper === "GET" ? "" : ` -X ${upper}`} "${url}" \\`,
    `  -H "Authorization: Bearer $PORTFOLIO_TOKEN"${body === undefined ? "" : ` \\\n  -H "Content-Type: application/json" \\\n  -d '${body}'`}`
  ].join("\n")
  const fetchSample = [
    `const response = await fetch("${url}", {`,
    `  method: "${upper}",`,
    `  headers: { Authorization: \`Bearer \${process.env.PORTFOLIO_TOKEN}\`${body === undefined ? "" : `, "Content-Type": "application/json"`} },`,
    ...(body === undefined ? [] : [`  body: JSON.stringify(${body}),`]),
    `  signal: AbortSignal.timeout(30_000)`,
    `})`,
    `if (!response.ok) {`,
    `  const problem = await response.json() // application/problem+json`,
    `  throw new Error(\`\${problem.errorCode}: \${problem.detail}\`)`,
    `}`,
    hasJsonAnswer ? `const data = await response.json()` : `// ${upper} answers ${Object.keys(operation.responses).find((s) => s.startsWith("2"))} with no body`
  ].join("\n")
  return [
    { lang: "Shell", label: "curl", source: curl },
    { lang: "TypeScript", label: "fetch", source: fetchSample }
  ]
}
