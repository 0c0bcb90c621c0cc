import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { decodeStoredLog, encodeStoredLog } from "../../src/adapters/nats/StoredLog.js"

describe("StoredLog, a key's log as the JetStream bucket holds it", () => {
  it("keeps the bytes every gateway version reads and writes, so that two versions can share a bucket", () => {
    // Written by the version that counted every request by read and compare-and-set before answering.
    const earlier = [180, 1, 5, 176, 236, 190, 203, 170, 51, 128, 136, 187, 203, 170, 51, 7, 0, 165, 2, 132, 226, 3]
    const times = [1_763_779_200_000, 1_763_779_200_007, 1_763_779_200_007, 1_763_779_200_300, 1_763_779_262_000]
    expect(Array.from(encodeStoredLog({ limit: 180, times }))).toEqual(earlier)
    expect(decodeStoredLog(Uint8Array.from(earlier))).toEqual({ limit: 180, times })
    expect(Array.from(encodeStoredLog({ limit: 9, times: [] }))).toEqual([9, 0])
  })

  it("stores a full log compactly", () => {
    const times = Array.from({ length: 180 }, (_, i) => 1_763_779_200_000 + i * 333)
    const bytes = encodeStoredLog({ limit: 180, times })
    expect(bytes.length).toBeLessThan(400)
    expect(decodeStoredLog(bytes)).toEqual({ limit: 180, times })
  })

  it("reads back any sorted log, and refuses truncated bytes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.array(fc.integer({ min: 0, max: 70_000 }), { maxLength: 200 }), (limit, offsets) => {
        const times = offsets.map((offset) => 1_700_000_000_000 + offset).sort((x, y) => x - y)
        const bytes = encodeStoredLog({ limit, times })
        expect(decodeStoredLog(bytes)).toEqual({ limit, times })
        if (times.length > 0) expect(decodeStoredLog(bytes.subarray(0, bytes.length - 1))).toBeUndefined()
      })
    )
    expect(decodeStoredLog(Uint8Array.from([0x80]))).toBeUndefined()
  })
})
