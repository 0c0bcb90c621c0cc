import { fileURLToPath } from "node:url"
import { join, resolve } from "node:path"

/**
 * The `<dataDir>/local.env` file: the launcher (`npm start`) writes the secret and the addresses
 * of the system it runs, and the CLI falls back on it, so that `npx portfolio ...` reaches that
 * system without any variable set. Plain `KEY=VALUE` lines; `#` starts a comment line.
 */
export const LocalEnvFile = "local.env"

/** `<repository>/.data`: where the launcher keeps the embedded database and `local.env`. */
export const defaultDataDir = resolve(fileURLToPath(new URL("../../..", import.meta.url)), ".data")

export const localEnvPath = (dataDir: string) => join(dataDir, LocalEnvFile)

export const parseLocalEnv = (text: string): ReadonlyMap<string, string> => {
  const entries = new Map<string, string>()
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line.length === 0 || line.startsWith("#")) continue
    const equals = line.indexOf("=")
    if (equals <= 0) continue
    entries.set(line.slice(0, equals).trim(), line.slice(equals + 1).trim())
  }
  return entries
}

export const renderLocalEnv = (entries: Readonly<Record<string, string>>, header: ReadonlyArray<string>): string =>
  [...header.map((line) => `# ${line}`), ...Object.entries(entries).map(([key, value]) => `${key}=${value}`), ""].join("\n")
