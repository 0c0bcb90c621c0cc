import { Layer, Logger, LogLevel } from "effect"

/** Every log line, at every level, as text (message and annotations), into `lines`. */
export const captureLogs = (lines: Array<string>) =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, Logger.make(({ annotations, logLevel, message }) => {
      lines.push(`${logLevel.label} ${JSON.stringify(message)} ${JSON.stringify(Object.fromEntries(annotations))}`)
    })),
    Logger.minimumLogLevel(LogLevel.All)
  )
