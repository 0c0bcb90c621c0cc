import { Effect } from "effect"
import { promisify } from "node:util"
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip } from "node:zlib"

export type ContentCoding = "br" | "gzip"

/**
 * The coding to answer with for an `Accept-Encoding` header (RFC 9110, section 12.5.3): the
 * acceptable one with the highest weight, br before gzip when equal (smaller for JSON), `*`
 * standing for any coding not named, `q=0` refusing one. Without the header, or when nothing we
 * make is acceptable, the answer goes as it is (identity).
 */
export const preferredCoding = (header: string | undefined): ContentCoding | "identity" => {
  if (header === undefined) return "identity"
  const weights = new Map<string, number>()
  for (const part of header.split(",")) {
    const [name, ...parameters] = part.split(";").map((token) => token.trim().toLowerCase())
    if (name === undefined || name === "") continue
    const q = parameters.find((parameter) => parameter.startsWith("q="))
    const weight = q === undefined ? 1 : Number(q.slice(2))
    weights.set(name, Number.isFinite(weight) ? Math.min(1, Math.max(0, weight)) : 0)
  }
  const weightOf = (coding: ContentCoding) => weights.get(coding) ?? weights.get("*") ?? 0
  const [br, gz] = [weightOf("br"), weightOf("gzip")]
  if (br === 0 && gz === 0) return "identity"
  return br >= gz ? "br" : "gzip"
}

const gzipAsync = promisify(gzip)
const brotliAsync = promisify(brotliCompress)

/** From this size on, an answer is compressed at the fast settings below. */
export const LargeBody = 1024 * 1024

/**
 * The settings for a body of `byteLength`. Brotli at quality 5 and gzip at level 6 are within a
 * few percent of their best on JSON for a small fraction of the time. A large body is compressed
 * on the read that follows a write, which waits for it: at 10 MB of JSON, quality 2 takes a
 * quarter of quality 5's time for 6% more bytes (28 against 112 ms of CPU, 395 against 372 KB),
 * and gzip's level 3 two fifths of level 6's for 18% more (30 against 75 ms, 747 against 633 KB).
 * Quality 1 (brotli's fastest encoder but one) then took 46% off the read of a 13 MB posi after a write
 * against quality 2 for 2% fewer bytes, and 1 to 8% more on the other lists of 6 to 10 MB; quality
 * 0 was no faster and 12% larger (docs/architecture.md, "Compressed once").
 */
export const compressionOf = (byteLength: number) =>
  byteLength >= LargeBody ? { brotliQuality: 1, gzipLevel: 3 } : { brotliQuality: 5, gzipLevel: 6 }

/** Compresses off the event loop (zlib's thread pool); each cached form is compressed once. */
export const compress = (coding: ContentCoding, body: Uint8Array): Effect.Effect<Uint8Array> => {
  const { brotliQuality, gzipLevel } = compressionOf(body.byteLength)
  return Effect.promise(() =>
    coding === "gzip"
      ? gzipAsync(body, { level: gzipLevel })
      : brotliAsync(body, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: brotliQuality,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength
        }
      })
  )
}

/**
 * The window of a streamed brotli body, 256 KB (2^18, the least brotli's fast qualities take)
 * instead of its default 4 MB. Every decoder of the body, ours (the answers to clients that accept
 * no br, the gzip made from it) and the clients', allocates a ring buffer of the window's size, and
 * at the large body's quality the encoder refers only within the block it is compressing: the same
 * size to the byte at 18 and 22 bits (the 50x tree and flat list, 8 and 10 MB of JSON, measured;
 * only the header's window differs), and made faster.
 */
const StreamedBrotliWindowBits = 18

/**
 * A streaming compressor, for a body compressed as it is made, whose size is not known yet: the
 * large body's settings, since only large answers are made a piece at a time.
 */
export const compressor = (coding: ContentCoding) => {
  const { brotliQuality, gzipLevel } = compressionOf(LargeBody)
  return coding === "gzip"
    ? createGzip({ level: gzipLevel })
    : createBrotliCompress({
      params: {
        [constants.BROTLI_PARAM_QUALITY]: brotliQuality,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_LGWIN]: StreamedBrotliWindowBits
      }
    })
}
