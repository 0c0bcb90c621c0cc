import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { applyPatch, type ScimPatchOperation } from "../../src/domain/ScimPatch.js"
import { attributesOfInput, canonicalPatch, canonicalUser, type ScimUserAttributes } from "../../src/domain/ScimUser.js"

const jane: ScimUserAttributes = {
  userName: "jane@example.com",
  externalId: "00u-jane",
  displayName: "Jane",
  givenName: "Jane",
  familyName: "Doe",
  formattedName: null,
  email: "jane@example.com",
  arbRole: "architect",
  active: true
}

const patched = (...operations: ReadonlyArray<ScimPatchOperation>) => applyPatch(jane, operations, "viewer")
const refused = (...operations: ReadonlyArray<ScimPatchOperation>) => {
  const outcome = patched(...operations)
  if (Result.isSuccess(outcome)) throw new Error(`${JSON.stringify(operations)} was applied`)
  return outcome.failure
}

describe("applyPatch", () => {
  it("reads Entra ID's deactivation: op Replace, active as the string False", () => {
    expect(patched({ op: "Replace", path: "active", value: "False" })).toEqual(Result.succeed({ ...jane, active: false }))
    expect(patched({ op: "REPLACE", path: "Active", value: "true" })).toEqual(Result.succeed(jane))
  })

  it("reads a replace without path as a map of attributes: active, a dotted name part, the core URN", () => {
    expect(patched({ op: "replace", value: { active: false } })).toEqual(Result.succeed({ ...jane, active: false }))
    expect(patched({ op: "replace", value: { "name.givenName": "X" } })).toEqual(Result.succeed({ ...jane, givenName: "X" }))
    expect(patched({ op: "add", value: { DisplayName: "J. Doe", "urn:ietf:params:scim:schemas:core:2.0:User": { externalId: "e2" } } }))
      .toEqual(Result.succeed({ ...jane, displayName: "J. Doe", externalId: "e2" }))
  })

  it("sets the one e-mail and the one role through their filtered value paths", () => {
    expect(patched({ op: "Add", path: 'emails[type eq "work"].value', value: "jane.doe@example.com" }))
      .toEqual(Result.succeed({ ...jane, email: "jane.doe@example.com" }))
    expect(patched({ op: "replace", path: "emails[primary eq true].value", value: "j@example.com" })).toEqual(Result.succeed({ ...jane, email: "j@example.com" }))
    expect(patched({ op: "Replace", path: 'roles[primary eq "True"].value', value: "tenant-admin" })).toEqual(Result.succeed({ ...jane, arbRole: "tenant-admin" }))
    expect(patched({ op: "add", path: "roles", value: [{ value: "viewer" }, { value: "contributor", primary: "True" }] }))
      .toEqual(Result.succeed({ ...jane, arbRole: "contributor" }))
    expect(patched({ op: "replace", path: "emails", value: [{ Value: "first@example.com" }] })).toEqual(Result.succeed({ ...jane, email: "first@example.com" }))
  })

  it("merges name's parts, and the URN-qualified path of a core attribute is the attribute", () => {
    expect(patched({ op: "replace", path: "name", value: { familyName: "Smith", formatted: "Jane Smith" } }))
      .toEqual(Result.succeed({ ...jane, familyName: "Smith", formattedName: "Jane Smith" }))
    expect(patched({ op: "replace", path: "urn:ietf:params:scim:schemas:core:2.0:User:name.givenName", value: "Janet" }))
      .toEqual(Result.succeed({ ...jane, givenName: "Janet" }))
  })

  it("remove clears the optional attributes; the role falls back to the default one, the e-mail to userName", () => {
    expect(patched({ op: "remove", path: "externalId" }, { op: "Remove", path: "name" }, { op: "remove", path: "displayName" }))
      .toEqual(Result.succeed({ ...jane, externalId: null, displayName: null, givenName: null, familyName: null, formattedName: null }))
    expect(patched({ op: "remove", path: "roles" })).toEqual(Result.succeed({ ...jane, arbRole: "viewer" }))
    expect(patched({ op: "replace", path: "emails", value: [{ value: "other@example.com" }] }, { op: "remove", path: 'emails[type eq "work"].value' }))
      .toEqual(Result.succeed(jane))
    const noFallback = applyPatch({ ...jane, userName: "jdoe" }, [{ op: "remove", path: "emails" }], "viewer")
    expect(Result.getFailure(noFallback)).toMatchObject({ _tag: "Some", value: { status: 400, scimType: "invalidValue" } })
  })

  it("remove with a value takes the role or the e-mail away only when the value names it; otherwise it changes nothing", () => {
    const admin = { ...jane, arbRole: "tenant-admin" as const }
    const removeRoles = (value: unknown): ScimPatchOperation => ({ op: "Remove", path: "roles", value })
    // Entra ID's removal of a role the User does not hold: the tenant-admin stays one.
    expect(applyPatch(admin, [removeRoles([{ value: "architect" }])], "viewer")).toEqual(Result.succeed(admin))
    // The replacement first, then the removal of the role replaced: the replacement holds.
    const viewer = { ...jane, arbRole: "viewer" as const }
    expect(applyPatch(viewer, [{ op: "Add", path: "roles", value: [{ value: "architect" }] }, removeRoles([{ value: "viewer" }])], "viewer"))
      .toEqual(Result.succeed({ ...viewer, arbRole: "architect" }))
    expect(patched(removeRoles([{ value: "viewer" }, { value: "architect" }]))).toEqual(Result.succeed({ ...jane, arbRole: "viewer" }))
    expect(patched(removeRoles({ Value: "Architect" }))).toEqual(Result.succeed({ ...jane, arbRole: "viewer" }))
    expect(patched({ op: "remove", path: "roles[primary eq true].value", value: "architect" })).toEqual(Result.succeed({ ...jane, arbRole: "viewer" }))
    expect(patched({ op: "remove", path: "roles[primary eq true].value", value: "contributor" })).toEqual(Result.succeed(jane))
    for (const value of [[], null, 3, "tenant-admin", [{ display: "architect" }]]) expect(patched(removeRoles(value)), JSON.stringify(value)).toEqual(Result.succeed(jane))

    const moved = { ...jane, email: "work@example.com" }
    const removeEmails = (value: unknown): ScimPatchOperation => ({ op: "remove", path: "emails", value })
    expect(applyPatch(moved, [removeEmails([{ value: "other@example.com" }])], "viewer")).toEqual(Result.succeed(moved))
    expect(applyPatch(moved, [{ op: "remove", path: 'emails[type eq "work"].value', value: "other@example.com" }], "viewer")).toEqual(Result.succeed(moved))
    // Named, in any case: the address falls back to userName, as without a value.
    expect(applyPatch(moved, [removeEmails([{ value: "WORK@example.com", type: "work" }])], "viewer")).toEqual(Result.succeed(jane))
  })

  it("ignores attributes this service does not keep: title, the enterprise extension, phone numbers, a name part it has not", () => {
    expect(
      patched(
        { op: "Add", path: "title", value: "Architect" },
        { op: "Add", path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", value: "IT" },
        { op: "Replace", path: 'phoneNumbers[type eq "work"].value', value: "+33 1" },
        { op: "replace", path: "name.middleName", value: "Q" },
        { op: "replace", path: "emails[type eq \"work\"].display", value: "shown" },
        { op: "replace", value: { title: "x", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { manager: { value: "m" } } } }
      )
    ).toEqual(Result.succeed(jane))
  })

  it("answers invalidPath for a path it cannot follow, noTarget for a filter matching nothing, mutability for read-only attributes", () => {
    expect(refused({ op: "replace", path: 'emails[type eq "home"].value', value: "x@example.com" })).toMatchObject({ status: 400, scimType: "noTarget" })
    expect(refused({ op: "replace", path: "roles[primary eq false].value", value: "viewer" })).toMatchObject({ scimType: "noTarget" })
    expect(refused({ op: "remove" })).toMatchObject({ scimType: "noTarget" })
    for (const path of ['emails[display co "x"].value', "userName.first", 'name[givenName eq "x"]', 'emails[type eq "work"', "emails..value", "active[value eq true]", 'roles[type eq "x"].value']) {
      expect(refused({ op: "replace", path, value: "x" }), path).toMatchObject({ status: 400, scimType: "invalidPath" })
    }
    expect(refused({ op: "replace", path: "id", value: "x" })).toMatchObject({ status: 400, scimType: "mutability" })
  })

  it("refuses bad values and unknown ops, and applies nothing of a PATCH that fails midway", () => {
    expect(refused({ op: "replace", path: "roles[primary eq true].value", value: "owner" })).toMatchObject({ status: 400, scimType: "invalidValue" })
    expect(refused({ op: "replace", path: "active", value: "maybe" })).toMatchObject({ scimType: "invalidValue" })
    expect(refused({ op: "replace", path: "emails[type eq \"work\"].value", value: "not an address" })).toMatchObject({ scimType: "invalidValue" })
    expect(refused({ op: "replace", path: "userName", value: "" })).toMatchObject({ scimType: "invalidValue" })
    expect(refused({ op: "replace", path: "displayName", value: "bell\u0007" })).toMatchObject({ scimType: "invalidValue" })
    expect(refused({ op: "replace", path: "displayName" })).toMatchObject({ scimType: "invalidValue" })
    expect(refused({ op: "remove", path: "userName" })).toMatchObject({ scimType: "invalidValue" })
    expect(refused({ op: "replace", value: "not a map" })).toMatchObject({ scimType: "invalidValue" })
    expect(refused({ op: "copy", path: "userName", value: "x" })).toMatchObject({ status: 400, scimType: "invalidSyntax" })
    expect(refused({ op: "replace", path: "displayName", value: "kept?" }, { op: "replace", path: "active", value: 3 })).toMatchObject({ scimType: "invalidValue" })
  })
})

describe("a User's input", () => {
  it("keeps a __proto__ key an own property, which sets no prototype and finds no rule", () => {
    for (
      const body of [
        '{"userName":"x@example.com","name":{"__proto__":{"givenName":"Mallory"}}}',
        '{"__proto__":{"userName":"x@example.com","active":true},"emails":[{"__proto__":{"value":"a@b.c"}}]}',
        '{"schemas":[],"Operations":[{"op":"add","__proto__":{"path":"active"}},{"__proto__":{}}]}'
      ]
    ) {
      const json = JSON.parse(body) as unknown
      for (const folded of [canonicalUser(json), canonicalPatch(json)] as ReadonlyArray<Record<string, unknown>>) {
        expect(Object.getPrototypeOf(folded), body).toBe(Object.prototype)
        for (const value of Object.values(folded)) {
          if (typeof value === "object" && value !== null && !Array.isArray(value)) expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
        }
      }
    }
    const named = canonicalUser(JSON.parse('{"name":{"__proto__":{"givenName":"Mallory"}}}')) as { name: Record<string, unknown> }
    expect(named.name.givenName).toBeUndefined()
    expect(Object.hasOwn(named.name, "__proto__")).toBe(true)
    // In a PATCH's value: no name part (ignored), and no path this service reads (400).
    expect(patched(JSON.parse('{"op":"replace","value":{"name":{"__proto__":{"givenName":"M"}}}}') as ScimPatchOperation)).toEqual(Result.succeed(jane))
    expect(refused(JSON.parse('{"op":"replace","value":{"__proto__":{"active":false}}}') as ScimPatchOperation)).toMatchObject({ status: 400, scimType: "invalidPath" })
  })

  it("folds attribute names to their canonical case and reads booleans sent as strings", () => {
    expect(canonicalUser({ USERNAME: "x", Emails: [{ Value: "a@b.c", PRIMARY: "True" }], active: "False", NAME: { GIVENNAME: "J" }, Title: "kept" }))
      .toEqual({ userName: "x", emails: [{ value: "a@b.c", primary: true }], active: false, name: { givenName: "J" }, Title: "kept" })
    expect(canonicalPatch({ schemas: [], operations: [{ OP: "Replace", PATH: "active", VALUE: "False" }] }))
      .toEqual({ schemas: [], Operations: [{ op: "Replace", path: "active", value: "False" }] })
  })

  it("takes the primary e-mail, else the first, else userName; the primary role, else the first, else the default", () => {
    const defaults = { defaultRole: "contributor", roleWhenAbsent: "contributor", activeWhenAbsent: true } as const
    const read = (input: Parameters<typeof attributesOfInput>[0]) => attributesOfInput(input, defaults)
    expect(Result.map(read({ userName: "u", emails: [{ value: "a@x.io" }, { value: " b@x.io ", primary: true }] }), (a) => a.email)).toEqual(Result.succeed("b@x.io"))
    expect(Result.map(read({ userName: "u", emails: [{ value: "a@x.io" }, { value: "b@x.io" }] }), (a) => a.email)).toEqual(Result.succeed("a@x.io"))
    expect(Result.map(read({ userName: "u@x.io" }), (a) => [a.email, a.arbRole, a.active])).toEqual(Result.succeed(["u@x.io", "contributor", true]))
    expect(Result.map(read({ userName: "u@x.io", roles: [{ value: "viewer" }, { value: "arb-member", primary: true }] }), (a) => a.arbRole)).toEqual(Result.succeed("arb-member"))
    expect(Result.map(attributesOfInput({ userName: "u@x.io" }, { ...defaults, roleWhenAbsent: "tenant-admin" }), (a) => a.arbRole)).toEqual(Result.succeed("tenant-admin"))
    expect(Result.map(attributesOfInput({ userName: "u@x.io", roles: [] }, { ...defaults, roleWhenAbsent: "tenant-admin" }), (a) => a.arbRole)).toEqual(Result.succeed("contributor"))
    expect(Result.getFailure(read({ userName: "jdoe" }))).toMatchObject({ _tag: "Some", value: { status: 400, scimType: "invalidValue" } })
    expect(Result.getFailure(read({ userName: "u@x.io", roles: [{ value: "owner" }] }))).toMatchObject({ _tag: "Some", value: { scimType: "invalidValue" } })
  })
})
