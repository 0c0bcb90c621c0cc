import { createHash, randomBytes } from "node:crypto"

/** 256 random bits, URL-safe. Only its hash is stored, so a database leak yields no usable link. */
export const newMagicToken = () => randomBytes(32).toString("base64url")

export const hashMagicToken = (token: string) => createHash("sha256").update(token, "utf8").digest("hex")
