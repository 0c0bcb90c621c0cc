import { ArbRole, Email, SsoConnectionRequest, SsoDomain, SsoRoleMapping } from "@portfolio/domain"
import { Result, Schema } from "effect"

/**
 * What `portfolio sso set` reads from its flags before anything is sent: plain functions answering
 * the value or the sentence that says what is wrong, so that a typo is a usage error explained at
 * once rather than a problem answered by provisioning. The rules are the contract's own schemas.
 */

/** The contract's bounds (`SsoConnectionRequest`), said in the messages. */
export const MaxSsoDomains = 50
export const MaxRoleMappings = 100
export const MaxBreakGlass = 20

const isDomain = Schema.is(SsoDomain)
const isEmail = Schema.is(Email)
const isMappedValue = Schema.is(SsoRoleMapping.fields.value)
const isRole = Schema.is(ArbRole)
// The claim's rule is not exported on its own: its property signature is read through a struct.
const isClaim = Schema.is(Schema.Struct({ roleClaim: SsoConnectionRequest.fields.roleClaim }))

const roles = `the roles are ${ArbRole.literals.join(", ")}`

const items = (text: string) => text.split(",").map((item) => item.trim()).filter((item) => item.length > 0)

const quoted = (values: ReadonlyArray<string>) => values.map((value) => `'${value}'`).join(", ")

/**
 * `example.com,example.org`: lowercased, since a domain is the same whatever its case and the
 * contract takes the lowercase form only; in the order given, once each.
 */
export const parseDomains = (text: string): Result.Result<ReadonlyArray<string>, string> => {
  const given = [...new Set(items(text).map((domain) => domain.toLowerCase()))]
  const invalid = given.filter((domain) => !isDomain(domain))
  if (invalid.length > 0) return Result.fail(`Not an e-mail domain: ${quoted(invalid)}; write domains such as example.com, comma-separated.`)
  if (given.length === 0) return Result.fail("No domain given: write at least one e-mail domain, such as example.com.")
  if (given.length > MaxSsoDomains) return Result.fail(`${given.length} domains given; a connection has at most ${MaxSsoDomains}.`)
  return Result.succeed(given)
}

/** The one message for an absent `--domains`: the contract needs at least one. */
export const MissingDomains =
  "--domains is required: the e-mail domains (comma-separated, such as example.com,example.org) whose people sign in with this provider; at least one."

export const parseRoleClaim = (text: string): Result.Result<string, string> =>
  isClaim({ roleClaim: text.trim() })
    ? Result.succeed(text.trim())
    : Result.fail(`'${text}' is not a claim name: 1 to 100 letters, digits and _ . : - (such as groups or roles).`)

export type RoleMapping = typeof SsoRoleMapping.Type

/**
 * `arb-admins=tenant-admin,architects=architect`. An item is split at its last `=`, since a role
 * never holds one and a group name may; a value cannot hold a comma.
 */
export const parseRoleMap = (text: string): Result.Result<ReadonlyArray<RoleMapping>, string> => {
  const mappings: Array<RoleMapping> = []
  for (const item of items(text)) {
    const at = item.lastIndexOf("=")
    const value = item.slice(0, Math.max(at, 0)).trim()
    const role = item.slice(at + 1).trim()
    if (at < 0 || value.length === 0) return Result.fail(`'${item}' is not value=role: write the claim's value, =, and a role (${roles}).`)
    if (!isMappedValue(value)) return Result.fail(`The value '${value}' is longer than 255 characters or holds a NUL character.`)
    if (!isRole(role)) return Result.fail(`Unknown role '${role}' in '${item}': ${roles}.`)
    const earlier = mappings.find((mapping) => mapping.value === value)
    // Two roles for one value would leave the choice to whoever reads the map first.
    if (earlier !== undefined && earlier.role !== role) return Result.fail(`'${value}' is mapped twice, to ${earlier.role} and to ${role}: keep one.`)
    if (earlier === undefined) mappings.push({ value, role })
  }
  if (mappings.length === 0) return Result.fail(`No mapping given: write value=role, comma-separated (${roles}).`)
  if (mappings.length > MaxRoleMappings) return Result.fail(`${mappings.length} mappings given; a role map has at most ${MaxRoleMappings}.`)
  return Result.succeed(mappings)
}

/** The one message for `--role-map` given alone: values mean nothing without the claim that carries them. */
export const RoleMapWithoutClaim = "--role-map needs --role-claim: the name of the ID token's claim whose values it maps (such as groups)."

/** `root@example.com,ops@example.com`: in the order given, once each whatever the case. */
export const parseBreakGlass = (text: string): Result.Result<ReadonlyArray<string>, string> => {
  const given = items(text)
  const invalid = given.filter((email) => !isEmail(email))
  if (invalid.length > 0) return Result.fail(`Not an e-mail: ${quoted(invalid)}.`)
  const seen = new Set<string>()
  const emails = given.filter((email) => !seen.has(email.toLowerCase()) && seen.add(email.toLowerCase()))
  if (emails.length === 0) return Result.fail("No e-mail given: write the break-glass accounts' e-mails, comma-separated.")
  if (emails.length > MaxBreakGlass) return Result.fail(`${emails.length} break-glass e-mails given; a connection has at most ${MaxBreakGlass}.`)
  return Result.succeed(emails)
}

/** The contract's bound on the client secret. */
export const MaxClientSecretLength = 1024

/**
 * The secret as a file or a pipe holds it: the line break an editor or `echo` leaves at its end is
 * not part of it. The message never quotes the text: it is a secret, or a wrong file holding one.
 */
export const parseClientSecret = (text: string, source: string): Result.Result<string, string> => {
  const secret = text.replace(/[\r\n]+$/, "")
  if (secret.length === 0) return Result.fail(`${source} holds no client secret: it is empty.`)
  // A client secret is one token: several lines are another file (a PEM key, a JSON document...).
  if (/[\r\n]/.test(secret)) return Result.fail(`${source} holds several lines; a client secret is a single line.`)
  if (secret.includes("\u0000")) return Result.fail(`${source} holds a NUL character; a client secret is text.`)
  if (secret.length > MaxClientSecretLength) {
    return Result.fail(`${source} holds ${secret.length} characters; a client secret is at most ${MaxClientSecretLength}.`)
  }
  return Result.succeed(secret)
}
