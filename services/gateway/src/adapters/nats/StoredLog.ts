const pushVarint = (out: Array<number>, value: number) => {
  let n = value
  while (n >= 128) {
    out.push((n % 128) + 128)
    n = Math.floor(n / 128)
  }
  out.push(n)
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
}

/** A key's log as the bucket holds it: the limit it is counted against and its times, sorted. */
export interface StoredLog {
  readonly limit: number
  readonly times: ReadonlyArray<number>
}

/**
 * One key's log as stored: varints of the limit it was counted against, the number of timestamps,
 * the newest, the oldest, then each later timestamp as the gap from the one before, oldest first.
 * Gaps within a minute take 1 to 3 bytes, so a full log of 180 stays under half a kilobyte. Every
 * gateway version reads and writes these bytes, so that replicas of two versions share a bucket.
 */
export const encodeStoredLog = ({ limit, times }: StoredLog): Uint8Array => {
  const out: Array<number> = []
  pushVarint(out, limit)
  pushVarint(out, times.length)
  if (times.length > 0) {
    pushVarint(out, times[times.length - 1]!)
    pushVarint(out, times[0]!)
    for (let i = 1; i < times.length; i++) pushVarint(out, times[i]! - times[i - 1]!)
  }
  return Uint8Array.from(out)
}

/** The log stored in `bytes`, or `undefined` when they are not one. */
export const decodeStoredLog = (bytes: Uint8Array): StoredLog | undefined => {
  try {
    const reader = new Reader(bytes)
    const limit = reader.varint()
    const count = reader.varint()
    const times: Array<number> = []
    if (count > 0) {
      reader.varint()
      times.push(reader.varint())
      for (let i = 1; i < count; i++) times.push(times[i - 1]! + reader.varint())
    }
    return { limit, times }
  } catch {
    return undefined
  }
}
