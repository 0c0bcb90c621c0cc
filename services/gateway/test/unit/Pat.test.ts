import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import fc from "fast-check"
import { createHash } from "node:crypto"
import { crc32 } from "node:zlib"
import {
  Base62Alphabet,
  checksumOf,
  displayPrefix,
  encodeChecksum,
  generatePat,
  hashPat,
  parsePat,
  PatLength,
  randomBase62
} from "../../src/domain/Pat.js"

describe("PAT format", () => {
  it("is ap_pat_ + 30 base62 + the 6-character base62 CRC32 of the random part", () => {
    const { token, tokenHash, tokenPrefix } = generatePat()
    expect(token).toMatch(/^ap_pat_[0-9A-Za-z]{36}$/)
    expect(token.length).toBe(PatLength)
    const random = token.slice(7, 37)
    const checksum = token.slice(37)
    let value = 0
    for (const c of checksum) value = value * 62 + Base62Alphabet.indexOf(c)
    expect(value).toBe(crc32(random))
    expect(tokenPrefix).toBe(token.slice(0, 10))
    expect(Buffer.from(tokenHash).toString("hex")).toBe(createHash("sha256").update(token).digest("hex"))
  })

  it("draws exactly the token it drew before the format was shared with SCIM tokens", () => {
    // Recorded with the PAT module as it was before domain/TokenFormat.ts, from the same bytes.
    let n = 0
    const bytes = (size: number) => Uint8Array.from({ length: size }, () => (n = (n * 37 + 11) % 256))
    const { token, tokenHash, tokenPrefix } = generatePat(bytes)
    expect(token).toBe("ap_pat_BctwHuPiLA1SNWbIVq96b8ffWHkhkr2xnyPE")
    expect(tokenPrefix).toBe("ap_pat_Bct")
    expect(Buffer.from(tokenHash).toString("hex")).toBe("1ea61cfd4a703cfb0f8371b0f2300b701254a5588e8bb127e4ee3cdca377b45b")
  })

  it("encodes checksums big-endian, left-padded, over the full 32-bit range", () => {
    expect(encodeChecksum(0)).toBe("000000")
    expect(encodeChecksum(61)).toBe("00000z")
    expect(encodeChecksum(62)).toBe("000010")
    expect(encodeChecksum(0xffffffff)).toBe("4gfFC3")
  })

  it("hashes with SHA-256 and shows only the first 10 characters", () => {
    expect(Buffer.from(hashPat("abc")).toString("hex")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(displayPrefix("ap_pat_ABCDEFGHIJ")).toBe("ap_pat_ABC")
  })

  it("accepts every generated token and gives back its hash", () => {
    for (let i = 0; i < 200; i++) {
      const pat = generatePat()
      const parsed = parsePat(pat.token)
      expect(Option.isSome(parsed)).toBe(true)
      expect(Option.getOrThrow(parsed).tokenHash).toEqual(pat.tokenHash)
    }
  })

  it("refuses a token with any single character changed (checksum or shape)", () => {
    const { token } = generatePat()
    fc.assert(
      fc.property(fc.integer({ min: 7, max: PatLength - 1 }), fc.constantFrom(...Base62Alphabet), (index, c) => {
        fc.pre(token[index] !== c)
        const altered = token.slice(0, index) + c + token.slice(index + 1)
        // CRC32 detects every single-character change of the random part; a changed checksum no longer matches.
        expect(Option.isNone(parsePat(altered))).toBe(true)
      })
    )
  })

  it("refuses wrong prefixes, lengths and alphabets without looking anything up", () => {
    const { token } = generatePat()
    const random = token.slice(7, 37)
    for (const candidate of [
      "",
      token.slice(0, -1),
      `${token}0`,
      token.replace("ap_pat_", "ap_pak_"),
      token.replace("ap_pat_", "AP_PAT_"),
      `ap_pat_${random.slice(0, 29)}-${checksumOf(random)}`,
      ` ${token}`
    ]) {
      expect(Option.isNone(parsePat(candidate))).toBe(true)
    }
  })

  it("draws base62 characters by rejection sampling: bytes 248..255 are dropped, others map to byte % 62", () => {
    const supply = [Uint8Array.from([0, 61, 62, 247, 248, 255, 123]), Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8])]
    const out = randomBase62(6, () => supply.shift()!)
    expect(out).toBe(`${Base62Alphabet[0]}${Base62Alphabet[61]}${Base62Alphabet[0]}${Base62Alphabet[247 % 62]}${Base62Alphabet[123 % 62]}${Base62Alphabet[1]}`)
  })

  it("gives each of the 62 characters the same number of accepted byte values", () => {
    const counts = new Array(62).fill(0)
    for (let byte = 0; byte < 248; byte++) counts[byte % 62]++
    expect(new Set(counts)).toEqual(new Set([4]))
  })
})
