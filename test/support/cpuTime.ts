import { readdirSync, readFileSync } from "node:fs"

/** Linux reports utime and stime in clock ticks of 1/100 s (USER_HZ) on every architecture node runs on. */
const TicksPerSecond = 100

/** CPU seconds (user + system) a process has spent so far; 0 once it is gone. */
export const cpuSeconds = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name may hold spaces and parentheses: the fields start after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / TicksPerSecond
  } catch {
    return 0
  }
}

/** The processes whose command name (as `ps -o comm` shows it) is `name`. */
export const pidsNamed = (name: string): ReadonlyArray<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name
    } catch {
      return false
    }
  })

/**
 * CPU seconds spent by named groups of processes between `start()` and `stop()`. A group given by
 * name is looked up at both ends (PostgreSQL starts a backend per connection) and counts the
 * processes seen at the end, minus what those seen at the start had spent.
 */
export const cpuMeter = (groups: Readonly<Record<string, () => ReadonlyArray<number>>>) => {
  const sample = () => Object.fromEntries(Object.entries(groups).map(([group, pids]) => [group, new Map(pids().map((pid) => [pid, cpuSeconds(pid)]))]))
  let before = sample()
  return {
    start: () => {
      before = sample()
    },
    stop: (): Record<string, number> => {
      const after = sample()
      return Object.fromEntries(Object.entries(after).map(([group, now]) => {
        let spent = 0
        for (const [pid, seconds] of now) spent += seconds - (before[group]?.get(pid) ?? 0)
        return [group, spent]
      }))
    }
  }
}

/** A process's resident memory in MB, as the kernel counts it (VmRSS). */
export const residentMb = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))
  return line === undefined ? Number.NaN : Number(line.split(/\s+/)[1]) / 1024
}
