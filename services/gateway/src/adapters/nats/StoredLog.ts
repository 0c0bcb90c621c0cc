const pushVarint = (out: Array<number>, value: number) => {
  let n = value
  while (n >= 128) {
    out.push((n % 128) + 128)
    n = Math.floor(n / 128)
  }
  out.push(n)
}

class Reader {
  constructor(readonly bytes: Uint8Array, public at = 0) {}
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

/**
 * One key's log as stored: varints of the limit it was counted against, the number of timestamps,
 * the newest, the oldest, then each later timestamp as the gap from the one before, oldest first.
 * Gaps within a minute take 1 to 3 bytes, so a full log of 180 stays under half a kilobyte. With the
 * count and the newest up front, a hit reads only the gaps it evicts and appends its own after the
 * rest of the bytes, copied as they are: a generous limit costs bytes, not work per timestamp.
 */
export class StoredLog {
  private head = 0
  private count = 0
  private newest = 0
  private body: Reader = new Reader(new Uint8Array(0))
  private bodyLeft = 0
  private appended: Array<number> = []
  private appendedAt = 0

  constructor(public limit: number) {}

  static decode(bytes: Uint8Array): StoredLog | undefined {
    try {
      const reader = new Reader(bytes)
      const log = new StoredLog(reader.varint())
      log.count = reader.varint()
      if (log.count > 0) {
        log.newest = reader.varint()
        log.head = reader.varint()
        log.body = reader
        log.bodyLeft = log.count - 1
      }
      return log
    } catch {
      return undefined
    }
  }

  get size(): number {
    return this.count
  }

  get oldest(): number {
    return this.head
  }

  private next(): number {
    if (this.bodyLeft > 0) {
      this.bodyLeft--
      return this.body.varint()
    }
    return this.appended[this.appendedAt++]!
  }

  evictThrough(cutoff: number): void {
    while (this.count > 0 && this.head <= cutoff) {
      this.count--
      if (this.count === 0) this.clear()
      else this.head += this.next()
    }
  }

  times(): Array<number> {
    const copy = StoredLog.decode(this.encode())!
    const times: Array<number> = []
    for (let time = copy.head, left = copy.count; left > 0; left--) {
      times.push(time)
      if (left > 1) time += copy.next()
    }
    return times
  }

  push(time: number): void {
    if (this.count === 0) {
      this.head = time
      this.newest = time
    } else if (time >= this.newest) {
      this.appended.push(time - this.newest)
      this.newest = time
    } else {
      // Replicas' clocks differ a little: keep the log sorted so that its head stays the oldest.
      const times = this.times()
      let at = times.length
      while (at > 0 && times[at - 1]! > time) at--
      times.splice(at, 0, time)
      this.clear()
      for (const t of times) this.push(t)
      return
    }
    this.count++
  }

  encode(): Uint8Array {
    const header: Array<number> = []
    pushVarint(header, this.limit)
    pushVarint(header, this.count)
    if (this.count > 0) {
      pushVarint(header, this.newest)
      pushVarint(header, this.head)
    }
    const rest = this.bodyLeft > 0 ? this.body.bytes.subarray(this.body.at) : new Uint8Array(0)
    const tail: Array<number> = []
    for (let i = this.appendedAt; i < this.appended.length; i++) pushVarint(tail, this.appended[i]!)
    const out = new Uint8Array(header.length + rest.length + tail.length)
    out.set(header, 0)
    out.set(rest, header.length)
    out.set(tail, header.length + rest.length)
    return out
  }

  private clear(): void {
    this.count = 0
    this.body = new Reader(new Uint8Array(0))
    this.bodyLeft = 0
    this.appended = []
    this.appendedAt = 0
  }
}
