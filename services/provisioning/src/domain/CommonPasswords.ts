import list from "./common-passwords.json" with { type: "json" }

/**
 * The common passwords shipped with the source (its `source` and `licence` say where from), already
 * NFKC and lower-cased. A static import, like a literal too large to write inline: the module
 * graph loads it with the code, so the rules that use it stay free of I/O, and an image missing it
 * fails at start instead of quietly accepting every password.
 */
export const commonPasswords: ReadonlySet<string> = new Set(list.passwords)
