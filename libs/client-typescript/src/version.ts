/** The SDK's version, sent in the `User-Agent` header; equal to `version` in package.json (a test checks it). */
export const VERSION = "0.1.87"
