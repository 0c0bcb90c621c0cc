import fc from "fast-check"

/**
 * Generators of malformed values for the bad-input properties: query strings, path segments and
 * bodies that a careless or hostile client could send.
 */

export const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("", " ", "%", "%zz", "%00", "%FF", "\u0000", "null", "undefined", "[]", "{}", "'; DROP TABLE x; --", "../../etc/passwd", "${jndi:x}")
)

export const notOneOf = (allowed: ReadonlyArray<string>) =>
  fc.oneof(
    anyText,
    fc.constantFrom(...allowed.map((v) => v.toLowerCase()), ...allowed.map((v) => ` ${v}`), ...allowed.map((v) => `${v},${v}`))
  ).filter((value) => !allowed.includes(value))

/** Whatever a lenient number parser could read as a positive integer is left out. */
const maybePositiveInt = (s: string) => s.trim() !== "" && Number.isInteger(Number(s)) && Number(s) >= 1
export const badLimit = fc.oneof(anyText, fc.integer({ max: 0 }).map(String), fc.double({ noNaN: true }).map(String), fc.constantFrom("1.5", "-1", "0", "NaN", "Infinity", "1,2"))
  .filter((s) => !maybePositiveInt(s))

export const badQ = fc.oneof(
  fc.constantFrom("", " ", "\t"),
  fc.string({ minLength: 1, maxLength: 10 }).map((s) => ` ${s}`),
  fc.string({ minLength: 1, maxLength: 10 }).map((s) => `${s} `),
  fc.string({ minLength: 201, maxLength: 260 })
)

/** A path segment that is not one of the literal routes next to a parameter, nor a dot segment. */
export const segment = (taken: ReadonlyArray<string>) =>
  fc.oneof(
    anyText.map(encodeURIComponent),
    fc.constantFrom("%", "%zz", "%00", "%FF", "%C0%AF", "%E0%A4%A", "%2F", "..%2F..%2Fadmin", "a%2Fb", "%20", "~", "APP-1%00"),
    fc.string({ minLength: 65, maxLength: 90 }).map(encodeURIComponent),
    fc.uuid()
  ).filter((s) => s.length > 0 && s !== "." && s !== ".." && !taken.includes(s) && !taken.includes(decodeSafely(s)))

const decodeSafely = (s: string) => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

const nonString = fc.oneof(fc.integer(), fc.boolean(), fc.constant([]), fc.constant({}), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(["x"]))
export const nonStringOrNull = fc.oneof(nonString, fc.constant(null))
const tooLong = (length: number) => fc.string({ minLength: length, maxLength: length + 20, unit: fc.constantFrom("a", "b", "é") })
const badEnum = (allowed: ReadonlyArray<string>) => fc.oneof(notOneOf(allowed), nonStringOrNull)
const badMoney = fc.oneof(
  fc.integer({ max: -1 }),
  fc.double({ min: 0.01, max: 1e9, noNaN: true }).filter((n) => !Number.isInteger(n)),
  fc.constantFrom(2 ** 53, 1e16, 1e300),
  fc.integer({ min: 0 }).map(String),
  fc.boolean(),
  fc.constant([1])
)
const badHours = fc.oneof(
  fc.double({ max: -0.001, noNaN: true, noDefaultInfinity: true }),
  fc.double({ min: 1_000_001, max: 1e12, noNaN: true }),
  fc.constantFrom("1", "one", true, [], {})
)
export const regulationTokens = ["DORA", "NIS2", "RGPD", "PCI_DSS", "HDS", "ISO_27001"]
const unknownToken = fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/).filter((t) => !regulationTokens.includes(t))
const badRegulations = fc.oneof(
  fc.tuple(fc.subarray(regulationTokens), unknownToken, fc.nat()).map(([known, unknown, at]) => {
    const list = [...known]
    list.splice(at % (list.length + 1), 0, unknown)
    return list.join(",")
  }),
  nonStringOrNull,
  tooLong(201)
)
const roles = ["PRODUCT_OWNER", "BUSINESS_OWNER", "TECH_LEAD", "ARCHITECT", "SECURITY_OFFICER", "DATA_OWNER"]
const badRoleAssignments = fc.oneof(
  unknownToken.filter((r) => !roles.includes(r)).map((role) => `${role}:someone@example.com`),
  fc.constantFrom(...roles),
  fc.constantFrom(...roles.map((r) => `${r}:`)),
  nonStringOrNull,
  tooLong(4001)
)
const badCode = fc.oneof(
  fc.string({ maxLength: 20 }).filter((s) => !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(s)),
  fc.string({ minLength: 65, maxLength: 80, unit: fc.constantFrom("A", "1") }),
  nonString
)

/** One field of an otherwise valid application body, made invalid. */
const corruptions: Record<string, fc.Arbitrary<unknown>> = {
  name: fc.oneof(nonStringOrNull, fc.constantFrom("", " ", " padded", "padded "), tooLong(201)),
  description: fc.oneof(nonString, tooLong(4001)),
  parentCode: badCode,
  status: badEnum(["ACTIVE", "PLANNED", "DEPRECATED", "RETIRED"]),
  dataClassification: badEnum(["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"]),
  criticality: badEnum(["MISSION_CRITICAL", "IMPORTANT", "NOMINAL", "LOW"]),
  rtoHours: badHours,
  rpoHours: badHours,
  regulations: badRegulations,
  roleAssignments: badRoleAssignments,
  licenseCost: badMoney,
  supportCost: badMoney,
  infraCost: badMoney,
  staffCost: badMoney,
  annualCost: badMoney,
  applicationVip: fc.oneof(fc.constantFrom("true", "false", 0, 1, null), fc.string({ maxLength: 5 })),
  contactIT: fc.oneof(nonString, tooLong(201)),
  contactMetier: fc.oneof(nonString, tooLong(201))
}

export const validApplication = { name: "Fuzzed", status: "ACTIVE", dataClassification: "INTERNAL", criticality: "LOW", regulations: "DORA", licenseCost: 1 }

export const corruptedApplication = fc
  .constantFrom(...Object.keys(corruptions))
  .chain((field) => corruptions[field]!.map((value) => ({ ...validApplication, [field]: value })))

/** A body that is not a JSON object at all, or not JSON. */
export const notAnObject = fc.oneof(
  fc.jsonValue().filter((v) => v === null || typeof v !== "object" || Array.isArray(v)).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 30 }).filter((s) => {
    try {
      const parsed = JSON.parse(s)
      return parsed === null || typeof parsed !== "object"
    } catch {
      return true
    }
  }),
  fc.constantFrom("{", "{\"name\":", "{'name':'x'}", "[", "\u0000", "{\"name\":\"x\",}")
)
