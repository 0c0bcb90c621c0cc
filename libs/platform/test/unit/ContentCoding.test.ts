import { Effect } from "effect"
import { brotliCompressSync, brotliDecompressSync, constants, createBrotliCompress, gunzipSync, gzipSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { compress, compressor, LargeBody, preferredCoding } from "../../src/http/ContentCoding.js"

/** The window a brotli stream's header declares, WBITS (RFC 7932, section 9.1); NaN below 16. */
const windowBits = (stream: Uint8Array) => {
  const bits = stream[0]!
  if ((bits & 1) === 0) return 16
  const n = (bits >> 1) & 7
  if (n !== 0) return 17 + n
  return ((bits >> 4) & 7) === 0 ? 17 : Number.NaN
}

describe("the coding of an answer", () => {
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["gzip", "gzip"],
    ["br", "br"],
    ["gzip, deflate, br", "br"],
    ["gzip;q=1.0, br;q=0.5", "gzip"],
    ["br;q=0, gzip", "gzip"],
    ["br;q=0, gzip;q=0", "identity"],
    ["deflate, compress", "identity"],
    ["identity", "identity"],
    ["*", "br"],
    ["*;q=0.3, br;q=0", "gzip"],
    ["GZIP", "gzip"],
    [" gzip ; q=0.8 , br ; q=0.9 ", "br"],
    ["br;q=abc, gzip", "gzip"]
  ] as const)("Accept-Encoding %j gives %s", (header, coding) => {
    expect(preferredCoding(header)).toBe(coding)
  })

  it("compresses JSON that each coding gives back exactly, several times smaller", async () => {
    const json = new TextEncoder().encode(JSON.stringify(Array.from({ length: 2_000 }, (_, i) => ({ code: `APP-${i}`, name: `Application ${i}`, status: "ACTIVE" }))))
    const gzip = await Effect.runPromise(compress("gzip", json))
    const br = await Effect.runPromise(compress("br", json))
    expect(Buffer.compare(gunzipSync(gzip), Buffer.from(json))).toBe(0)
    expect(Buffer.compare(brotliDecompressSync(br), Buffer.from(json))).toBe(0)
    expect(json.byteLength / gzip.byteLength).toBeGreaterThan(5)
    expect(json.byteLength / br.byteLength).toBeGreaterThan(5)
  })

  it("compresses a large body at the fast settings and a smaller one at the thorough ones", async () => {
    const body = (bytes: number) => {
      const json = JSON.stringify(Array.from({ length: Math.ceil(bytes / 40) }, (_, i) => ({ code: `APP-${i}`, name: `Application ${i % 97}` })))
      return new TextEncoder().encode(json)
    }
    const brotli = (json: Uint8Array, quality: number) =>
      brotliCompressSync(json, {
        params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: json.byteLength }
      })
    const large = body(LargeBody + 1)
    expect(large.byteLength).toBeGreaterThanOrEqual(LargeBody)
    expect(Buffer.from(await Effect.runPromise(compress("br", large)))).toEqual(brotli(large, 1))
    expect(Buffer.from(await Effect.runPromise(compress("gzip", large)))).toEqual(gzipSync(large, { level: 3 }))
    const small = body(LargeBody / 2)
    expect(Buffer.from(await Effect.runPromise(compress("br", small)))).toEqual(brotli(small, 5))
    expect(Buffer.from(await Effect.runPromise(compress("gzip", small)))).toEqual(gzipSync(small, { level: 6 }))
  })

  it("streams br with a 256 KB window, which costs the large body's quality no byte", async () => {
    const json = Buffer.from(JSON.stringify(Array.from({ length: 60_000 }, (_, i) => ({ code: `APP-${i}`, name: `Application ${i % 997}`, status: "ACTIVE" }))))
    const streamed = async (zip: NodeJS.ReadWriteStream) => {
      const chunks: Array<Buffer> = []
      zip.on("data", (chunk: Buffer) => chunks.push(chunk))
      const ended = new Promise((resolve) => zip.on("end", resolve))
      for (let at = 0; at < json.byteLength; at += 32 * 1024) zip.write(json.subarray(at, at + 32 * 1024))
      zip.end()
      await ended
      return Buffer.concat(chunks)
    }
    const br = await streamed(compressor("br"))
    expect(Buffer.compare(brotliDecompressSync(br), json)).toBe(0)
    const wideWindow = await streamed(createBrotliCompress({
      params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT }
    }))
    expect({ streamed: windowBits(br), byDefault: windowBits(wideWindow) }).toEqual({ streamed: 18, byDefault: 22 })
    expect(br.byteLength).toBe(wideWindow.byteLength)
  })
})
