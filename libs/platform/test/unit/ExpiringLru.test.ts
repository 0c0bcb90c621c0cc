import { describe, expect, it } from "vitest"
import { makeExpiringLru } from "../../src/cache/ExpiringLru.js"

describe("ExpiringLru", () => {
  it("answers an entry until its deadline, not at it, and drops it once read expired", () => {
    const lru = makeExpiringLru<string>(10)
    lru.set("a", "A", 1_000)
    expect(lru.get("a", 999)).toBe("A")
    expect(lru.get("a", 1_000)).toBeUndefined()
    expect(lru.size()).toBe(0)
    // An entry stored with deadline 0 is simply expired: no special case for time 0.
    lru.set("z", "Z", 0)
    expect(lru.get("z", 0)).toBeUndefined()
  })

  it("when full, drops the least recently used: a read counts as a use, a set replaces in place", () => {
    const lru = makeExpiringLru<number>(3)
    lru.set("a", 1, 10_000)
    lru.set("b", 2, 10_000)
    lru.set("c", 3, 10_000)
    expect(lru.get("a", 0)).toBe(1)
    lru.set("d", 4, 10_000)
    expect(lru.get("b", 0)).toBeUndefined()
    expect([lru.get("a", 0), lru.get("c", 0), lru.get("d", 0)]).toEqual([1, 3, 4])
    lru.set("c", 33, 10_000)
    expect(lru.size()).toBe(3)
    lru.set("e", 5, 10_000)
    // a was read before c was set again and d read after it: a is now the least recently used.
    expect(lru.get("a", 0)).toBeUndefined()
    expect(lru.get("c", 0)).toBe(33)
  })

  it("deletes every entry whose value matches, and only those", () => {
    const lru = makeExpiringLru<{ readonly tenant: string }>(100)
    for (let i = 0; i < 50; i++) lru.set(`k${i}`, { tenant: i % 2 === 0 ? "even" : "odd" }, 10_000)
    lru.deleteWhere((value) => value.tenant === "even")
    expect(lru.size()).toBe(25)
    for (let i = 0; i < 50; i++) expect(lru.get(`k${i}`, 0)?.tenant).toBe(i % 2 === 0 ? undefined : "odd")
  })

  it("stays bounded whatever is written", () => {
    const lru = makeExpiringLru<true>(1_000)
    for (let i = 0; i < 10_000; i++) lru.set(String(i), true, 10_000)
    expect(lru.size()).toBe(1_000)
    expect(lru.get("8999", 0)).toBeUndefined()
    expect(lru.get("9000", 0)).toBe(true)
  })
})
