import { createInterface } from "node:readline"
import type { Readable } from "node:stream"

const colours = [36, 35, 33, 34, 32, 31] as const

/** Pads the names to one width and, on a terminal, gives each its colour. */
export const makePrefixer = (names: ReadonlyArray<string>, colour: boolean) => {
  const width = Math.max(...names.map((name) => name.length))
  return (name: string) => {
    const padded = name.padEnd(width)
    const index = names.indexOf(name)
    const code = colours[(index < 0 ? 0 : index) % colours.length]
    return colour ? `\u001b[${code}m${padded} |\u001b[0m ` : `${padded} | `
  }
}

/** Calls `onLine` for each line of each stream, and keeps the last `keep` lines for error reports. */
export const collectLines = (streams: ReadonlyArray<Readable>, onLine: (line: string) => void, keep = 40) => {
  const last: Array<string> = []
  for (const stream of streams) {
    createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
      last.push(line)
      if (last.length > keep) last.shift()
      onLine(line)
    })
  }
  return last
}
