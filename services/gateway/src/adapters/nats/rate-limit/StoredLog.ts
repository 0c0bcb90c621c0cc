import { add, type CountedLog, emptyLog, ExactEntries } from "../../../domain/rate-limit/CountedLog.js"

class Writer {
  bytes = new Uint8Array(256)
  length = 0
  varint(value: number) {
    if (this.length + 8 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2)
      grown.set(this.bytes)
      this.bytes = grown
    }
    let n = value
    while (n >= 128) {
      this.bytes[this.length++] = (n % 128) + 128
      n = Math.floor(n / 128)
    }
    this.bytes[this.length++] = n
  }
  done(): Uint8Array {
    return this.bytes.subarray(0, this.length)
  }
}

class Reader {
  at = 0
  constructor(readonly bytes: Uint8Array) {}
  varint(): number {
    let n = 0
    for (let scale = 1; this.at < this.bytes.length && scale <= 2 ** 56; scale *= 128) {
      const byte = this.bytes[this.at++]!
      n += (byte % 128) * scale
      if (byte < 128) return n
    }
    throw new Error("truncated rate-limit log")
  }
  get more(): boolean {
    return this.at < this.bytes.length
  }
}

/** A key's log as the bucket holds it: the limit it is counted against and its entries. */
export interface StoredLog {
  readonly limit: number
  readonly log: CountedLog
}

/**
 * One key's log as stored: varints of the limit it was counted against, the number of timestamps,
 * the newest, the oldest, then each later timestamp as the gap from the one before, oldest first.
 * Gaps within a minute take 1 to 3 bytes, so a full log of 180 stays under half a kilobyte. Every
 * gateway version reads and writes these bytes, so that replicas of two versions share a bucket.
 *
 * With `grouped`, a log of more than `ExactEntries` entries (domain/CountedLog.ts) is written as its
 * newest entries in those bytes, followed by its older ones, one count per time slot: the number of
 * groups, then for each the gap from the previous group's time (the first from 0) and its count. A
 * gateway reading only the first part would count too few: see docs/security.md on rolling updates.
 */
export const encodeStoredLog = ({ limit, log }: StoredLog, grouped = false): Uint8Array => {
  let from = 0
  if (grouped) {
    let exact = 0
    from = log.times.length
    while (from > 0 && exact + log.counts[from - 1]! <= ExactEntries) exact += log.counts[--from]!
  }
  const out = new Writer()
  out.varint(limit)
  let count = 0
  for (let i = from; i < log.counts.length; i++) count += log.counts[i]!
  out.varint(count)
  if (count > 0) {
    out.varint(log.times[log.times.length - 1]!)
    out.varint(log.times[from]!)
    let previous = log.times[from]!
    for (let i = from; i < log.times.length; i++) {
      const time = log.times[i]!
      for (let n = i === from ? 1 : 0; n < log.counts[i]!; n++) {
        out.varint(time - previous)
        previous = time
      }
    }
  }
  if (from > 0) {
    out.varint(from)
    let previous = 0
    for (let i = 0; i < from; i++) {
      out.varint(log.times[i]! - previous)
      out.varint(log.counts[i]!)
      previous = log.times[i]!
    }
  }
  return out.done()
}

/** The log stored in `bytes`, or `undefined` when they are not one. */
export const decodeStoredLog = (bytes: Uint8Array): StoredLog | undefined => {
  try {
    const reader = new Reader(bytes)
    const limit = reader.varint()
    const count = reader.varint()
    const log = emptyLog()
    if (count > 0) {
      reader.varint()
      let time = reader.varint()
      log.times.push(time)
      log.counts.push(1)
      for (let i = 1; i < count; i++) {
        const gap = reader.varint()
        time += gap
        if (gap === 0) log.counts[log.counts.length - 1]!++
        else {
          log.times.push(time)
          log.counts.push(1)
        }
      }
    }
    if (reader.more) {
      const groups = reader.varint()
      let time = 0
      for (let i = 0; i < groups; i++) {
        time += reader.varint()
        add(log, time, reader.varint())
      }
    }
    return { limit, log }
  } catch {
    return undefined
  }
}
