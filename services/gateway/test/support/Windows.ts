/** The gateway's window: a minute. */
export const W = 60_000

/** The most of sorted `times` that fall within any one window: what a sliding-window limit bounds. */
export const mostInAnyWindow = (times: ReadonlyArray<number>, windowMs = W): number => {
  let most = 0
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}
