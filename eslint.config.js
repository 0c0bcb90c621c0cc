// One lint configuration for the whole tree.
import eslint from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/dist/**", ".build-check-*/**", ".data/**", "coverage/**", "libs/client-python/**"] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "require-yield": "off",
      "no-console": ["error", { allow: ["warn", "error"] }],
      // A package's files outside its exports map are not its API: they move or vanish in a patch
      // release (Effect 4 exports none of its `internal/`).
      "no-restricted-imports": ["error", {
        patterns: [{
          regex: "^(@[^/.][^/]*/)?[^/.@][^/]*/(.*/)?(dist|internal|build|lib)(/|$)",
          message: "Import a package through its public entry points, not its dist/, build/, lib/ or internal/ files."
        }]
      }],
      "no-restricted-syntax": ["error", {
        selector: "ImportExpression[source.value=/^(@[^\\/.][^\\/]*\\/)?[^\\/.@][^\\/]*\\/(.*\\/)?(dist|internal|build|lib)(\\/|$)/]",
        message: "Import a package through its public entry points, not its dist/, build/, lib/ or internal/ files."
      }]
    }
  },
  {
    files: ["libs/cli/**", "deploy/**", "test/**"],
    rules: { "no-console": "off" }
  }
)
