import { startCluster } from "./topology.js"

/**
 * `npm run cluster`: the drills' topology (topology.ts) on its own, to try a fault by hand. Logs go
 * to files under the printed folder; the CLI reaches the cluster with `DATA_DIR=<folder> npx portfolio`.
 */
const started = Date.now()
const workDir = process.env["CLUSTER_DIR"]
const cluster = await startCluster(workDir ? { workDir } : {})
let stopping = false
const shutdown = async () => {
  if (stopping) return
  stopping = true
  console.log("\nstopping...")
  await cluster.stop()
  process.exit(0)
}
process.on("SIGINT", () => void shutdown())
process.on("SIGTERM", () => void shutdown())
console.log([
  `Ready in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
  `  public API (ingress):  ${cluster.baseUrl}`,
  `  console:               ${cluster.addresses.consoleUrl}`,
  `  NATS:                  ${cluster.nats.urls}`,
  `  PostgreSQL:            ${cluster.postgres.url}`,
  ...cluster.replicas.map((replica) => `  ${replica.name.padEnd(22)} pid ${replica.pid}, ports ${[replica.listen.port, replica.listen.admin].filter((p) => p !== undefined).join(", ")}`),
  `  logs and CLI config:   ${cluster.workDir} (DATA_DIR=${cluster.workDir} npx portfolio ...)`,
  "Ctrl-C stops everything."
].join("\n"))
