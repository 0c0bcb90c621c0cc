import { buildPackage } from "./build-package.js"

await buildPackage()
