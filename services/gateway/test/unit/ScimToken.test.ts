import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { createHash } from "node:crypto"
import { crc32 } from "node:zlib"
import { generatePat, parsePat } from "../../src/domain/Pat.js"
import { claimsScim, generateScimToken, parseScimToken } from "../../src/domain/ScimToken.js"
import { Base62Alphabet, checksumOf } from "../../src/domain/TokenFormat.js"

const decode = (checksum: string) => [...checksum].reduce((value, c) => value * 62 + Base62Alphabet.indexOf(c), 0)

describe("SCIM token format", () => {
  it("is ap_scim_ + 30 base62 + the 6-character base62 CRC32 of the random part, shown by its first 11 characters", () => {
    const { token, tokenHash, tokenPrefix } = generateScimToken()
    expect(token).toMatch(/^ap_scim_[0-9A-Za-z]{36}$/)
    expect(token.length).toBe(44)
    expect(decode(token.slice(38))).toBe(crc32(token.slice(8, 38)))
    expect(tokenPrefix).toBe(token.slice(0, 11))
    expect(Buffer.from(tokenHash).toString("hex")).toBe(createHash("sha256").update(token).digest("hex"))
  })

  it("draws its random part as a PAT does, from the same bytes: only the prefix differs", () => {
    const supply = () => {
      let n = 0
      return (size: number) => Uint8Array.from({ length: size }, () => (n = (n * 37 + 11) % 256))
    }
    expect(generateScimToken(supply()).token).toBe(generatePat(supply()).token.replace("ap_pat_", "ap_scim_"))
  })

  it("accepts every generated token and gives back its hash and prefix", () => {
    for (let i = 0; i < 200; i++) {
      const scim = generateScimToken()
      expect(parseScimToken(scim.token)).toEqual(Option.some(scim))
    }
  })

  it("refuses other kinds, wrong prefixes, lengths, alphabets and checksums; a PAT is never read as one, nor it as a PAT", () => {
    const { token } = generateScimToken()
    const random = token.slice(8, 38)
    const changed = token.slice(0, 20) + (token[20] === "a" ? "b" : "a") + token.slice(21)
    for (const candidate of [
      "",
      token.slice(0, -1),
      `${token}0`,
      changed,
      token.replace("ap_scim_", "AP_SCIM_"),
      token.replace("ap_scim_", "ap_pat_"),
      `ap_scim_${random.slice(0, 29)}-${checksumOf(random)}`,
      ` ${token}`,
      generatePat().token
    ]) {
      expect(Option.isNone(parseScimToken(candidate)), candidate).toBe(true)
    }
    expect(Option.isNone(parsePat(token))).toBe(true)
    expect(claimsScim(token)).toBe(true)
    expect(claimsScim("ap_scim_short")).toBe(true)
    expect(claimsScim(generatePat().token)).toBe(false)
  })
})
