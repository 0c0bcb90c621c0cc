import { it } from "@effect/vitest"

// @effect/vitest 0.30's `layer(...)` assigns its own `effect`, `scoped`, `layer`, `flakyTest` and
// `prop` onto the shared `it` (vitest's own object) and never puts them back. The suite runs test
// files one after another in the same worker (vitest.config.ts, isolate: false), so without this
// the next file would register its `it.effect` tests on the previous file's layer, closed by then
// and without the test services (its TestClock). Runs before every test file. @effect/vitest 4
// wraps instead of assigning (Effect-TS/effect-smol#2177), and this file goes with the move.
const pristineKey = Symbol.for("portfolio/effect-vitest-pristine-it")
const kept = globalThis as unknown as Record<symbol, Partial<typeof it> | undefined>
const pristine = (kept[pristineKey] ??= {
  effect: it.effect,
  scoped: it.scoped,
  layer: it.layer,
  flakyTest: it.flakyTest,
  prop: it.prop
})
Object.assign(it, pristine)
