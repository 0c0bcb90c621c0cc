/**
 * nats-server processes of a test file's own, for what the shared unauthenticated server on 4222
 * cannot show: authentication, permissions, TLS. Also the keys, JWTs and certificate they need.
 */
import { afterAll, beforeAll } from "@effect/vitest"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { nkeys } from "@nats-io/transport-node"
import { freePort } from "./FreePort.js"
import { accepts, jetStreamCluster, NatsServerBinary, stop } from "./LocalNats.js"

/** A directory of the calling test file's own, removed after its tests. */
export const useTempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "nats-auth-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A nats-server of the calling test file's own, on a free loopback port, configured with what
 * `config` gives (its `listen` added) and `env` for the `$VARIABLES` it names; started before the
 * file's tests, stopped after them.
 */
export const useNatsServer = (dir: string, name: string, config: () => string | Promise<string>, env: Record<string, string> = {}) => {
  const state: { url: string; server?: ChildProcess } = { url: "" }
  beforeAll(async () => {
    const port = await freePort()
    const file = join(dir, `${name}.conf`)
    writeFileSync(file, `listen: "127.0.0.1:${port}"\n${await config()}\n`)
    const server = spawn(NatsServerBinary, ["-c", file], { stdio: ["ignore", "ignore", "pipe"], env: { PATH: process.env["PATH"] ?? "", ...env } })
    let errors = ""
    server.stderr?.on("data", (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-2_000)
    })
    state.server = server
    for (let attempt = 0; !(await accepts(port)); attempt++) {
      if (attempt >= 100 || server.exitCode !== null) throw new Error(`nats-server ${name} did not start: ${errors}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    state.url = `nats://127.0.0.1:${port}`
  }, 15_000)
  afterAll(async () => {
    if (state.server !== undefined) await stop(state.server)
  }, 10_000)
  return { url: () => state.url }
}

const base64url = (data: Uint8Array | string) => Buffer.from(data).toString("base64url")

/** A JWT as nsc writes them: header and claims signed by the issuer's NKey. */
const signedJwt = (issuer: ReturnType<typeof nkeys.createUser>, subject: string, name: string, nats: object) => {
  const header = base64url(JSON.stringify({ typ: "JWT", alg: "ed25519-nkey" }))
  const claims = base64url(JSON.stringify({
    jti: randomBytes(16).toString("hex").toUpperCase(),
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject,
    nats
  }))
  return `${header}.${claims}.${base64url(issuer.sign(new TextEncoder().encode(`${header}.${claims}`)))}`
}

/** A user NKey: its public key for the server's configuration, its seed for the client's file. */
export const userNKey = () => {
  const user = nkeys.createUser()
  return { publicKey: user.getPublicKey(), seed: new TextDecoder().decode(user.getSeed()) }
}

/**
 * Decentralised (operator mode) authentication as `nsc` would set it up: an operator, one account
 * preloaded in the server's memory resolver, and a user of it with its `.creds` file.
 */
export const operatorMode = () => {
  const operator = nkeys.createOperator()
  const account = nkeys.createAccount()
  const user = nkeys.createUser()
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 }
  const accountJwt = signedJwt(operator, account.getPublicKey(), "portfolio", { limits: unlimited, type: "account", version: 2 })
  const userJwt = signedJwt(account, user.getPublicKey(), "gateway", { pub: {}, sub: {}, subs: -1, data: -1, payload: -1, type: "user", version: 2 })
  return {
    serverConfig: [
      `operator: ${signedJwt(operator, operator.getPublicKey(), "operator", { type: "operator", version: 2 })}`,
      "resolver: MEMORY",
      `resolver_preload: { ${account.getPublicKey()}: ${accountJwt} }`
    ].join("\n"),
    creds: [
      "-----BEGIN NATS USER JWT-----",
      userJwt,
      "------END NATS USER JWT------",
      "",
      "-----BEGIN USER NKEY SEED-----",
      new TextDecoder().decode(user.getSeed()),
      "------END USER NKEY SEED------",
      ""
    ].join("\n")
  }
}

/** A self-signed certificate for 127.0.0.1 (which the client checks under the name localhost), also its own CA, written into `dir`. */
export const selfSignedCertificate = async (dir: string) => {
  const cert = join(dir, "server-cert.pem")
  const key = join(dir, "server-key.pem")
  await promisify(execFile)("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", cert
  ], { timeout: 10_000 })
  return { cert, key }
}


/**
 * A three-server JetStream cluster of the calling test file's own (`jetStreamCluster`), started
 * before its tests and stopped after them; its servers can be killed and started again.
 */
export const useNatsCluster = () => {
  const state: { cluster?: Awaited<ReturnType<typeof jetStreamCluster>> } = {}
  const dir = useTempDir()
  beforeAll(async () => {
    state.cluster = await jetStreamCluster(dir)
  }, 30_000)
  afterAll(async () => {
    await state.cluster?.stop()
  }, 30_000)
  const cluster = () => {
    if (state.cluster === undefined) throw new Error("the cluster is not started (beforeAll failed?)")
    return state.cluster
  }
  return { urls: () => cluster().urls, servers: () => cluster().servers }
}
