import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { decodeStoredLog, encodeStoredLog as encodeLog } from "../../src/adapters/nats/rate-limit/StoredLog.js"
import { compact, expand, ExactEntries, logOf } from "../../src/domain/rate-limit/CountedLog.js"

const encodeStoredLog = ({ limit, times }: { limit: number; times: ReadonlyArray<number> }) => encodeLog({ limit, log: logOf(times) })
const decode = (bytes: Uint8Array) => {
  const stored = decodeStoredLog(bytes)
  return stored && { limit: stored.limit, times: expand(stored.log) }
}

describe("StoredLog, a key's log as the JetStream bucket holds it", () => {
  it("keeps the bytes every gateway version reads and writes, so that two versions can share a bucket", () => {
    // Written by the version that counted every request by read and compare-and-set before answering.
    const earlier = [180, 1, 5, 176, 236, 190, 203, 170, 51, 128, 136, 187, 203, 170, 51, 7, 0, 165, 2, 132, 226, 3]
    const times = [1_763_779_200_000, 1_763_779_200_007, 1_763_779_200_007, 1_763_779_200_300, 1_763_779_262_000]
    expect(Array.from(encodeStoredLog({ limit: 180, times }))).toEqual(earlier)
    expect(decode(Uint8Array.from(earlier))).toEqual({ limit: 180, times })
    expect(Array.from(encodeStoredLog({ limit: 9, times: [] }))).toEqual([9, 0])
  })

  it("stores a full log compactly", () => {
    const times = Array.from({ length: 180 }, (_, i) => 1_763_779_200_000 + i * 333)
    const bytes = encodeStoredLog({ limit: 180, times })
    expect(bytes.length).toBeLessThan(400)
    expect(decode(bytes)).toEqual({ limit: 180, times })
  })

  it("reads back any sorted log, and refuses truncated bytes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.array(fc.integer({ min: 0, max: 70_000 }), { maxLength: 200 }), (limit, offsets) => {
        const times = offsets.map((offset) => 1_700_000_000_000 + offset).sort((x, y) => x - y)
        const bytes = encodeStoredLog({ limit, times })
        expect(decode(bytes)).toEqual({ limit, times })
        if (times.length > 0) expect(decode(bytes.subarray(0, bytes.length - 1))).toBeUndefined()
      })
    )
    expect(decode(Uint8Array.from([0x80]))).toBeUndefined()
  })

  it("bounds a grouped log whatever the rate, reading it back with every entry at its time or later, in its slot", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 65_000 }), { maxLength: 3_000 }), fc.boolean(), (offsets, grouped) => {
        const times = offsets.map((offset) => 1_700_000_000_000 + offset).sort((x, y) => x - y)
        const log = logOf(times)
        if (grouped) compact(log)
        const bytes = encodeLog({ limit: 100_000_000, log }, grouped)
        const read = expand(decodeStoredLog(bytes)!.log)
        expect(read).toHaveLength(times.length)
        read.forEach((time, i) => {
          expect(time).toBeGreaterThanOrEqual(times[i]!)
          expect(Math.floor(time / 1_000)).toBe(Math.floor(times[i]! / 1_000))
        })
        if (grouped) {
          expect(read.slice(-ExactEntries)).toEqual(times.slice(-ExactEntries))
          expect(bytes.length).toBeLessThan(ExactEntries * 3 + 67 * 8)
        } else expect(read).toEqual(times)
      }),
      { numRuns: 50 }
    )
  })
})
