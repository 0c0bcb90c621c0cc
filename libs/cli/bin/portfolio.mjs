#!/usr/bin/env node
// The CLI from the repository runs its TypeScript sources through tsx (`npm run build` also makes
// dist/cli/portfolio.mjs, which plain node runs in a fraction of the time). The libraries are
// plain JavaScript and load about twice as fast without the TypeScript hooks, so they are loaded
// first; the sources then find them in the module cache.
await Promise.all([import("effect"), import("@effect/platform"), import("@effect/platform-node"), import("@effect/cli")])
const { register } = await import("tsx/esm/api")
register()
await import("../src/main.ts")
