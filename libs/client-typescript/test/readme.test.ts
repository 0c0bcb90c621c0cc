import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

/** The README's TypeScript examples, one after the other as one module, must type-check against the sources. */
const packageDir = fileURLToPath(new URL("../", import.meta.url))

describe("README.md", () => {
  it("has examples that type-check against the SDK", () => {
    const readme = readFileSync(join(packageDir, "README.md"), "utf8")
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
    expect(blocks.length).toBeGreaterThanOrEqual(8)
    const dir = mkdtempSync(join(tmpdir(), "portfolio-client-readme-"))
    try {
      const file = join(dir, "examples.mts")
      writeFileSync(file, `${blocks.join("\n")}\nexport {}\n`)
      const program = ts.createProgram([file], {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
        types: ["node"],
        typeRoots: [join(packageDir, "../../node_modules/@types")],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        paths: { "@architecture-portfolio/client": [join(packageDir, "src/index.ts")] }
      })
      const problems = ts
        .getPreEmitDiagnostics(program)
        .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
      expect(problems).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("names every method of the SDK", async () => {
    const readme = readFileSync(join(packageDir, "README.md"), "utf8")
    const { operations } = await import("../src/index.js")
    for (const { resource, method } of Object.values(operations)) expect(readme).toContain(`client.${resource}.${method}(`)
  })
})
