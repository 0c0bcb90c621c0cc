import { Effect, Schema } from "effect"

/**
 * The wire forms every contract shares, as Effect 3 defined them: Effect 4's `DateTimeUtc` is
 * a `DateTime.Utc` on both sides and it has no `Uuid`, so the contract names its own.
 */

/**
 * A UUID in any version, letters in either case: the dashed hexadecimal shape only, as the
 * contract has always accepted it (Effect 4's `isUUID` also checks the version and variant bits).
 */
export const Uuid = Schema.String.check(
  Schema.isPattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/u, {
    expected: "a Universally Unique Identifier"
  })
).annotate({ identifier: "UUID", description: "a Universally Unique Identifier", format: "uuid" })

/** A UTC instant: an ISO 8601 string on the wire (and in `Schema.encodeSync`), a `DateTime.Utc` in code. */
export const DateTimeUtc = Schema.DateTimeUtcFromString.annotate({ identifier: "DateTimeUtc" })

/**
 * An optional key with a default, as Effect 3's `optionalWith(schema, { default })`: an absent key
 * decodes to the default, and so does a constructor given no value. For schemas whose wire form is
 * the value itself; a default in another wire form is given with `Schema.withDecodingDefaultKey`.
 */
export const withDefault = <S extends Schema.Top & Schema.WithoutConstructorDefault>(value: S["Encoded"] & S["~type.make.in"]) =>
(self: S) => self.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value)), Schema.withConstructorDefault(Effect.succeed(value)))

/**
 * An instance of a schema class made from values already valid (read back from our own storage,
 * or derived from checked values), without the constructor's parse of every field: Effect 4's
 * `{ disableChecks: true }` still checks each field's type, which made a whole-tenant list of
 * 10,000 applications about a second slower. The result is what `new Class(fields)` makes, the
 * class's prototype and the fields as its own properties (all of them: no constructor default
 * applies); libs/domain/test/trusted.test.ts holds it to that, so that a change in how Effect
 * builds its classes fails there first.
 */
export const trusted = <C extends (new(fields: any, options?: any) => any) & { readonly fields: Schema.Struct.Fields }>(
  Class: C,
  fields: Schema.Struct.Type<C["fields"]>
): InstanceType<C> => Object.assign(Object.create(Class.prototype), fields)
