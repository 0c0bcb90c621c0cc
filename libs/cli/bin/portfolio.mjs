#!/usr/bin/env node
// The CLI from the repository runs its TypeScript sources through tsx (`npm run build` also makes
// dist/cli/portfolio.mjs, which plain node runs in a fraction of the time). The libraries are
// plain JavaScript and load about twice as fast without the TypeScript hooks, so they are loaded
// first; the sources then find them in the module cache. platform-node by the modules the CLI uses,
// not its index, which loads every adapter (redis's too).
await Promise.all([
  import("effect"),
  import("effect/cli"),
  import("effect/http"),
  import("effect/http-api"),
  import("@effect/platform-node/NodeRuntime"),
  import("@effect/platform-node/NodeServices")
])
const { register } = await import("tsx/esm/api")
register()
await import("../src/main.ts")
