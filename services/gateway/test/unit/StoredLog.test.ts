import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { StoredLog } from "../../src/adapters/nats/StoredLog.js"

describe("StoredLog, a key's log as the JetStream bucket holds it", () => {
  it("stores a log compactly and reads it back, evicted, appended and out of order", () => {
    const times = Array.from({ length: 180 }, (_, i) => 1_763_779_200_000 + i * 333)
    const original = new StoredLog(180)
    for (const time of times) original.push(time)
    const bytes = original.encode()
    expect(bytes.length).toBeLessThan(400)
    const log = StoredLog.decode(bytes)!
    expect([log.limit, log.size, log.oldest, log.times()]).toEqual([180, 180, times[0], times])
    log.evictThrough(times[2]!)
    log.push(times[179]! + 5)
    log.push(times[179]! + 1)
    const expected = [...times.slice(3), times[179]! + 1, times[179]! + 5]
    const again = StoredLog.decode(log.encode())!
    expect([again.size, again.oldest, again.times()]).toEqual([expected.length, expected[0], expected])
    again.evictThrough(Number.MAX_SAFE_INTEGER)
    expect(StoredLog.decode(again.encode())!.size).toBe(0)
    expect(StoredLog.decode(Uint8Array.from([0x80]))).toBeUndefined()
  })

  it("agrees with a plain sorted list on any evictions and pushes", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 5_000 })), { maxLength: 200 }), (steps) => {
        let log = new StoredLog(1_000)
        let reference: Array<number> = []
        let now = 1_700_000_000_000
        for (const [evict, delta] of steps) {
          if (evict) {
            log.evictThrough(now - delta)
            reference = reference.filter((t) => t > now - delta)
          } else {
            const time = now + delta - 2_500
            log.push(time)
            reference = [...reference, time].sort((x, y) => x - y)
            now += delta
          }
          log = StoredLog.decode(log.encode())!
          expect(log.times()).toEqual(reference)
          expect(log.size).toBe(reference.length)
          if (reference.length > 0) expect(log.oldest).toBe(reference[0])
        }
      })
    )
  })
})
