#!/usr/bin/env node
// There is no build step: the CLI runs its TypeScript sources through tsx.
import { register } from "tsx/esm/api"

register()
await import("../src/main.ts")
