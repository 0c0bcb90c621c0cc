/**
 * A User's version as HTTP carries it (docs/scim.md): a weak ETag, `W/"3"`, in the `ETag` header
 * and in `meta.version`; `If-Match` and `If-None-Match` name it back.
 */
export const weakETag = (version: number) => `W/"${version}"`

/** The opaque tags of an `If-Match` or `If-None-Match` value, weak or strong alike; `*` stands for any. */
const tagsOf = (header: string): ReadonlyArray<string> =>
  Array.from(header.matchAll(/\s*(\*|(?:W\/)?"[^"]*")\s*(?:,|$)/g), (match) => match[1]!.replace(/^W\//, ""))

/**
 * Whether a conditional header names this version. The comparison is weak (RFC 9110 8.8.3.2):
 * the only tags this service gives are weak, and the identity tools send them back as they got them.
 */
export const namesVersion = (header: string, version: number): boolean => {
  const tags = tagsOf(header)
  return tags.includes("*") || tags.includes(`"${version}"`)
}
