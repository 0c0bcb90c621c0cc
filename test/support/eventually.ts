/**
 * Reads until `done` holds of the reading or `timeoutMs` has passed, and returns the last reading for
 * the caller to assert. A fixed sleep before an assertion is a race on a machine whose cores the whole
 * suite shares; a bounded poll waits only as long as the system needs.
 */
export const eventually = async <A>(read: () => Promise<A> | A, done: (reading: A) => boolean, timeoutMs = 20_000, everyMs = 100): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const reading = await read()
    if (done(reading) || Date.now() >= deadline) return reading
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
