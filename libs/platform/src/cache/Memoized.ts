/**
 * `compute` remembered by its string argument, for the few values a hot path derives again and
 * again from stable inputs (a subscription's URL, its secret): at most `max` of them, forgotten all
 * at once past that, which costs a hot path less than an LRU's bookkeeping on every hit. An
 * `undefined` result is remembered too.
 */
export const memoized = <A>(compute: (key: string) => A, max = 10_000): ((key: string) => A) => {
  const known = new Map<string, A>()
  return (key) => {
    if (known.has(key)) return known.get(key) as A
    const value = compute(key)
    if (known.size >= max) known.clear()
    known.set(key, value)
    return value
  }
}
