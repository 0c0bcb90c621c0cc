/**
 * An answer made a piece at a time, which any number of readers follow from its first byte while
 * it is made, each at its own pace: the first bytes of a large answer leave before its last are
 * made (docs/architecture.md, "The read path"). Once made, it is one buffer, and the pieces go.
 */
export class ProgressiveBody {
  #pieces: Array<Uint8Array> = []
  #outcome: { readonly _tag: "Made"; readonly whole: Uint8Array } | { readonly _tag: "Failed"; readonly error: unknown } | undefined
  #waiting: Array<() => void> = []

  get settled(): boolean {
    return this.#outcome !== undefined
  }

  push(piece: Uint8Array): void {
    if (this.#outcome !== undefined || piece.byteLength === 0) return
    this.#pieces.push(piece)
    this.#wake()
  }

  /** The whole answer, its pieces let go. */
  end(): Uint8Array {
    if (this.#outcome?._tag === "Made") return this.#outcome.whole
    const whole = Buffer.concat(this.#pieces)
    this.#outcome = { _tag: "Made", whole }
    this.#pieces = []
    this.#wake()
    return whole
  }

  fail(error: unknown): void {
    if (this.#outcome !== undefined) return
    this.#outcome = { _tag: "Failed", error }
    this.#pieces = []
    this.#wake()
  }

  /** Resolves once a first piece is there, or the making has ended either way. */
  async started(): Promise<void> {
    while (this.#outcome === undefined && this.#pieces.length === 0) await this.#next()
  }

  /** Every byte from the first, as it comes; fails as the making failed. */
  async *follow(): AsyncGenerator<Uint8Array> {
    let index = 0
    let offset = 0
    for (;;) {
      const outcome = this.#outcome
      if (outcome?._tag === "Failed") throw outcome.error
      if (outcome?._tag === "Made") {
        if (offset < outcome.whole.byteLength) yield outcome.whole.subarray(offset)
        return
      }
      const piece = this.#pieces[index]
      if (piece === undefined) {
        await this.#next()
        continue
      }
      index++
      offset += piece.byteLength
      yield piece
    }
  }

  #next(): Promise<void> {
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  #wake(): void {
    const waiting = this.#waiting
    this.#waiting = []
    for (const resolve of waiting) resolve()
  }
}
