import { defineConfig } from "vitest/config"

// The SDK promises Node.js 18 (package.json engines), and vitest 5, which the rest of the
// repository runs on, needs Node.js 22 or later. So the SDK keeps vitest 3 of its own
// (package.json devDependencies) and runs its suite with it, on Node.js 24 and on 18.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
