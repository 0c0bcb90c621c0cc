import { InvalidRegulation, type RegulationToken, RegulationTokens } from "@portfolio/domain"
import { Effect } from "effect"

const isToken = (token: string): token is RegulationToken => (RegulationTokens as ReadonlyArray<string>).includes(token)

/**
 * Reads the comma-separated `regulations` field: tokens are trimmed and case-sensitive, empty
 * items are ignored, duplicates collapse, and the result follows the catalogue's order so that
 * equal sets always read (and audit) the same.
 */
export const parseRegulations = (text: string): Effect.Effect<ReadonlyArray<RegulationToken>, InvalidRegulation> => {
  const given = new Set<RegulationToken>()
  for (const raw of text.split(",")) {
    const token = raw.trim()
    if (token.length === 0) continue
    if (!isToken(token)) {
      return Effect.fail(
        new InvalidRegulation({
          detail: `Unknown regulation token '${token}'. Allowed tokens (case-sensitive): ${RegulationTokens.join(", ")}.`
        })
      )
    }
    given.add(token)
  }
  return Effect.succeed(RegulationTokens.filter((token) => given.has(token)))
}

export const renderRegulations = (tokens: ReadonlyArray<RegulationToken>): string => tokens.join(",")
