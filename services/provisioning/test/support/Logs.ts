import { Layer, Logger, References } from "effect"

/** Every log line, at every level, as text (level, message and annotations), into `lines`. */
export const captureLogs = (lines: Array<string>) =>
  Layer.merge(
    Logger.layer([Logger.make(({ fiber, logLevel, message }) => {
      lines.push(`${logLevel.toUpperCase()} ${JSON.stringify(message)} ${JSON.stringify(fiber.getRef(References.CurrentLogAnnotations))}`)
    })]),
    Layer.succeed(References.MinimumLogLevel, "All")
  )
