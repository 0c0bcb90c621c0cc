// The launcher's ports come from the same place as the tests': one rule for the whole machine.
export { freePort } from "@portfolio/platform/testing/FreePort"
