#!/usr/bin/env node
// There is no build step: the CLI runs its TypeScript sources through tsx. The libraries are
// plain JavaScript and load about twice as fast without the TypeScript hooks, so they are loaded
// first; the sources then find them in the module cache.
await Promise.all([import("effect"), import("@effect/platform"), import("@effect/platform-node"), import("@effect/cli")])
const { register } = await import("tsx/esm/api")
register()
await import("../src/main.ts")
