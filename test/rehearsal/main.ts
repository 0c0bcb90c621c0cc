/**
 * `npm run rehearsal`: the platform run as it ships, on one machine without Docker or Kubernetes
 * (docs/rehearsal.md). Builds the image from deploy/Dockerfile with buildah, runs the chart's
 * rendered pods as podman pods, puts Debian's nginx in front of the gateways as ingress-nginx would,
 * scrapes every pod with Debian's Prometheus as the ServiceMonitor says, evaluates the dashboard's
 * queries and the alert rules, follows one trace; proves with negative controls that each check can
 * fail; removes everything it started; exits non-zero on any failure.
 */
import { randomBytes } from "node:crypto"
import { spawn, type ChildProcess } from "node:child_process"
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request as httpsRequest } from "node:https"
import { fileURLToPath } from "node:url"
import { parseAllDocuments, stringify } from "yaml"
import { adminCall } from "../support/adminCall.js"
import { ClientKind, ConsumerKind, OtlpCollector, ProducerKind, ServerKind } from "../support/otlpCollector.js"
import { WebhookReceiver } from "../support/webhookReceiver.js"
import { extractHelm } from "../deploy/helmBinary.js"
import { ensureBaseImage } from "./baseImage.js"
import { buildImage, checkImage, healthCheckOf, ImageName } from "./image.js"
import { nginxConfig, requestsPerUpstream } from "./ingress.js"
import { Kubelet, type RunningPod } from "./kubelet.js"
import { createNetwork, Network, relay, removeNetwork } from "./network.js"
import { installOrder, planWorkloads, UnknownField, type K8sObject, type Workload } from "./podSpec.js"
import { panelQueries, scrapeConfigs, substitute } from "./prometheus.js"
import { outcome, seconds, sh, sleep } from "./shell.js"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const here = fileURLToPath(new URL(".", import.meta.url))
const Namespace = "portfolio"
const Release = "rel"
const IngressHost = "portfolio.rehearsal.localhost"
/** Names the pods resolve to the host, where PostgreSQL, NATS and the receivers run for them. */
const HostNames = { postgres: "postgres.rehearsal.internal", nats: "nats.rehearsal.internal", telemetry: "otlp.rehearsal.internal" } as const
const NatsPort = 4222
const OtlpPort = 4318
const ScrapeSeconds = 5

const figures: Array<string> = []
const figure = (line: string) => {
  figures.push(line)
  console.log(`    ${line}`)
}
let stepStarted = Date.now()
const step = (title: string) => {
  stepStarted = Date.now()
  console.log(`\n==> ${title}`)
}
const done = (summary: string) => console.log(`    ok (${seconds(stepStarted)}): ${summary}`)

/** What the run started, stopped in reverse order whatever happens. */
const cleanups: Array<{ readonly what: string; readonly run: () => Promise<unknown> }> = []
const onCleanup = (what: string, run: () => Promise<unknown>) => cleanups.push({ what, run })

const ensureTools = async () => {
  if (process.getuid?.() !== 0) throw new Error("the rehearsal runs containers with rootful podman and a bridge network: run it as root")
  const wanted: Record<string, string> = {
    buildah: "buildah",
    podman: "podman",
    debootstrap: "debootstrap",
    nginx: "nginx",
    prometheus: "prometheus",
    promtool: "prometheus",
    openssl: "openssl",
    "nats-server": "nats-server",
    psql: "postgresql-client",
    // podman's bridge network: netavark, which writes its rules with iptables (only suggested by
    // Debian's podman, and absent from a minimal machine: "netavark: No such file or directory").
    iptables: "iptables",
    aardvark: "aardvark-dns",
    netavark: "netavark",
    catatonit: "catatonit",
    // The runtime the configuration below names: Debian's podman depends on crun only, and a fresh
    // machine without runc fails every container with 'default OCI runtime "runc" not found'.
    runc: "runc"
  }
  const libexec: Record<string, string> = {
    aardvark: "/usr/lib/podman/aardvark-dns",
    netavark: "/usr/lib/podman/netavark",
    catatonit: "/usr/libexec/podman/catatonit"
  }
  const missing = new Set<string>()
  for (const [command, pkg] of Object.entries(wanted)) {
    const path = libexec[command]
    const found = path !== undefined ? (await outcome("test", ["-x", path])).code === 0 : (await outcome("sh", ["-c", `command -v ${command}`])).code === 0
    if (!found) missing.add(pkg)
  }
  if (missing.size > 0) {
    console.log(`    installing ${[...missing].join(", ")} from Debian's packages`)
    await sh("apt-get", ["update"], { timeoutMs: 5 * 60_000 })
    await sh("apt-get", ["install", "-y", ...missing], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, timeoutMs: 15 * 60_000 })
  }
  // Debian's podman defaults to crun, which fails on this kind of machine (field notes); runc works.
  const conf = "/etc/containers/containers.conf.d/portfolio-rehearsal.conf"
  mkdirSync("/etc/containers/containers.conf.d", { recursive: true })
  writeFileSync(conf, '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n')
}

const render = async (extra: ReadonlyArray<string>): Promise<ReadonlyArray<K8sObject>> => {
  const helm = await extractHelm()
  try {
    const stdout = await sh(helm.path, ["template", Release, `${repoRoot}charts/architecture-portfolio`, "--namespace", Namespace, "--kube-version", "1.33.0", "-f", `${here}values.yaml`, ...extra])
    return parseAllDocuments(stdout).map((document) => document.toJS() as K8sObject | null).filter((object): object is K8sObject => object !== null)
  } finally {
    await helm.dispose()
  }
}

const startProcess = (command: string, args: ReadonlyArray<string>, logFile: string): ChildProcess => {
  const child = spawn(command, [...args], { stdio: ["ignore", "pipe", "pipe"] })
  const keep = (chunk: Buffer) => appendFileSync(logFile, chunk)
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  return child
}

const stopProcess = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), 10_000).unref()
  })

const waitFor = async <A>(what: string, timeoutMs: number, attempt: () => Promise<A | undefined>): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const value = await attempt()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    await sleep(250)
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s${last === undefined ? "" : ` (${String(last)})`}`)
}

/** A request through the ingress: TLS to 127.0.0.1 with the host's name as SNI and Host, trusting the run's certificate only. */
const throughIngress = (
  port: number,
  ca: string,
  method: string,
  path: string,
  options: { readonly headers?: Record<string, string>; readonly body?: unknown; readonly abortAfterMs?: number } = {}
): Promise<{ readonly status: number; readonly headers: Record<string, string | Array<string> | undefined>; readonly body: string }> =>
  new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const call = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        servername: IngressHost,
        ca,
        method,
        path,
        headers: { host: IngressHost, ...(body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
        agent: false
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }))
        response.on("error", reject)
      }
    )
    call.on("error", reject)
    if (options.abortAfterMs !== undefined) setTimeout(() => (call.destroy(), resolve({ status: 0, headers: {}, body: "" })), options.abortAfterMs)
    call.end(body)
  })

const hasSamples = async (prometheusUrl: string, query: string) => ((await promQuery(prometheusUrl, "/api/v1/query", { query })).result as Array<unknown>).length > 0

const promQuery = async (prometheusUrl: string, path: string, params: Record<string, string>) => {
  const response = await fetch(`${prometheusUrl}${path}?${new URLSearchParams(params)}`)
  const json = (await response.json()) as { status: string; error?: string; data: any }
  if (json.status !== "success") throw new Error(`Prometheus ${path} ${params["query"] ?? ""}: ${json.error}`)
  return json.data
}

const main = async () => {
  const runStarted = Date.now()
  const work = `/var/tmp/portfolio-rehearsal-${process.pid}`
  mkdirSync(work, { recursive: true })
  onCleanup("work directory", async () => rmSync(work, { recursive: true, force: true }))
  const freshBase = process.argv.includes("--fresh-base")

  step("tools: buildah, podman, debootstrap, nginx, Prometheus, nats-server (Debian's packages)")
  await ensureTools()
  done((await sh("podman", ["--version"])).trim())

  step("the base image, node:<version>-bookworm-slim, made here (no registry)")
  const base = await ensureBaseImage({ fresh: freshBase, log: (line) => console.log(`    ${line}`) })
  figure(`base ${base.name}: ${base.sizeMb} MB, ${base.reused ? "reused from the image store (same recipe; --fresh-base remakes it)" : `made in ${base.seconds.toFixed(0)} s`}`)

  step("the image, deploy/Dockerfile built by buildah")
  const image = await buildImage({})
  figure(`image ${ImageName}: ${image.sizeMb} MB, built in ${image.seconds.toFixed(0)} s`)
  for (const check of await checkImage()) figure(`image: ${check.what}: ${check.seen}`)
  done("built and checked")

  step("the network, PostgreSQL, NATS and the OTLP receiver for the pods")
  await createNetwork()
  onCleanup("network", removeNetwork)
  const database = `rehearsal_${process.pid}`
  await sh("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c", `CREATE DATABASE ${database}`])
  onCleanup("database", () => outcome("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c", `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`]))
  const pgRelay = await relay(5432, 5432)
  onCleanup("PostgreSQL relay", pgRelay.close)
  mkdirSync(`${work}/nats`, { recursive: true })
  const nats = startProcess("nats-server", ["-a", Network.gateway, "-p", String(NatsPort), "-js", "-sd", `${work}/nats`], `${work}/nats.log`)
  onCleanup("NATS", () => stopProcess(nats))
  const collector = new OtlpCollector()
  await collector.start(Network.gateway, OtlpPort)
  onCleanup("OTLP receiver", () => collector.stop())
  const receiver = await new WebhookReceiver().start(Network.gateway)
  onCleanup("webhook receiver", () => receiver.stop())
  done(`network ${Network.name} ${Network.subnet}; PostgreSQL database ${database}; NATS with JetStream; OTLP and webhook receivers on ${Network.gateway}`)

  step("the chart, rendered with test/rehearsal/values.yaml, its pods planned")
  const objects = await render([
    "--set", `database.url=postgres://postgres@${HostNames.postgres}:5432/${database}`,
    "--set", `nats.url=nats://${HostNames.nats}:${NatsPort}`,
    "--set", `telemetry.otlpEndpoint=http://${HostNames.telemetry}:${OtlpPort}`
  ])
  const cluster = { namespace: Namespace, objects }
  const { workloads, notHonoured } = planWorkloads(cluster)
  const order = installOrder(workloads)
  figure(`rendered: ${objects.length} objects (${[...new Set(objects.map((o) => o.kind))].join(", ")})`)
  figure(`workloads: ${workloads.map((w) => `${w.kind}/${w.name.replace(`${Release}-architecture-portfolio-`, "")}${w.replicas > 1 ? ` x${w.replicas}` : ""}`).join(", ")}`)
  console.log("    pod-spec fields seen and not applied here:")
  for (const [path, why] of notHonoured) console.log(`      ${path}: ${why}`)
  for (const kind of ["NetworkPolicy", "PodDisruptionBudget", "ServiceAccount", "HorizontalPodAutoscaler"]) {
    const count = objects.filter((o) => o.kind === kind).length
    if (count > 0) console.log(`      ${count} ${kind}: not enforced (no API server, one machine)`)
  }
  done("every pod spec field known")

  const hosts = { [HostNames.postgres]: Network.gateway, [HostNames.nats]: Network.gateway, [HostNames.telemetry]: Network.gateway }
  const kubelet = new Kubelet({ network: Network.name, hosts, workDir: `${work}/pods`, log: (line) => console.log(line) })
  onCleanup("pods", () => kubelet.stopAll())

  step("helm install: pre-install hooks, the Deployments, post-install hooks")
  for (const job of order.preInstall) {
    const result = await runJobOrPod(kubelet, job)
    figure(`${job.kind}/${short(job.name)} (pre-install, weight ${job.weight}): succeeded in ${result.seconds.toFixed(1)} s, attempt ${result.attempts}`)
  }
  const installStarted = Date.now()
  const deployed = new Map<string, ReadonlyArray<RunningPod>>()
  await Promise.all(
    order.release.map(async (workload) => {
      const pods = await kubelet.deploy(workload, 180_000)
      deployed.set(workload.name, pods)
      figure(`Deployment/${short(workload.name)}: ${pods.length}/${workload.replicas} ready, ${pods.map((pod) => `${((pod.readyAt! - pod.startedAt) / 1000).toFixed(1)} s`).join(", ")} from start`)
    })
  )
  const podsReady = [...deployed.values()].flat().length
  figure(`pods ready: ${podsReady}, all within ${seconds(installStarted)} of the first start`)
  for (const job of order.postInstall) {
    const result = await runJobOrPod(kubelet, job)
    figure(`${job.kind}/${short(job.name)} (post-install, weight ${job.weight}): succeeded in ${result.seconds.toFixed(1)} s`)
    tenantIdOfJob ??= /"tenantId":\s*"([^"]+)"/.exec(result.logs)?.[1]
    const said = result.logs.split("\n").find((line) => line.includes("is created") || line.includes("exists"))
    figure(`  it said: ${(said ?? result.logs.split("\n").filter((line) => line.trim() !== "").slice(-1)[0] ?? "").replace(/\{.*/, "{...}").trim()}`)
  }
  for (const test of order.test) {
    const result = await runJobOrPod(kubelet, test)
    const oks = result.logs.split("\n").filter((line) => line.startsWith("ok ")).length
    figure(`helm test: Pod/${short(test.name)} succeeded, ${oks} checks ok`)
  }
  // The image's HEALTHCHECK (which Kubernetes ignores, but docker run and compose use) in a running
  // container, judged as Docker judges it: unhealthy only after --retries failures in a row, each
  // --interval apart, each killed at --timeout counted from its start in the container (coreutils'
  // timeout), as Docker's daemon counts it: podman's own start is no part of it. Beside the drills
  // that start took 0.6 s here, and a CI once killed the whole `podman exec` at 5 s three times
  // in a row before node had printed a word (its own fetch gives up at 4 s, and says so).
  const gatewayPod = deployed.get(nameOf("gateway"))![0]!
  const health = await healthCheckOf(ImageName)
  const probes: Array<string> = []
  for (let attempt = 1; ; attempt++) {
    const started = Date.now()
    const probe = await outcome("podman", ["exec", gatewayPod.containers[0]!.id, "timeout", "--signal=KILL", `${health.timeoutMs / 1000}s`, ...health.command], { timeoutMs: 120_000 })
    const said = probe.stdout.trim() || (probe.code === 137 ? `killed at the ${health.timeoutMs / 1000} s timeout` : `exit ${probe.code}: ${probe.stderr.trim().split("\n").slice(-1)[0] ?? ""}`)
    probes.push(`${said} (${Date.now() - started} ms with podman exec)`)
    if (probe.code === 0) break
    if (attempt === health.retries) throw new Error(`the image's health check failed ${attempt} times in a row: ${probes.join("; ")}`)
    await sleep(health.intervalMs)
  }
  figure(`image health check: passes in a running gateway container (${probes.length === 1 ? "first probe" : `probe ${probes.length} of ${health.retries}, after: ${probes.slice(0, -1).join("; ")}`}): ${probes.at(-1)}`)
  // What the pod spec asked for, read back from inside a running container rather than trusted.
  const gatewayContainer = gatewayPod.containers[0]!
  const inside = (await sh("podman", ["exec", gatewayContainer.id, "sh", "-c", [
    "id -u; id -g",
    "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
    "grep CapEff /proc/self/status | cut -f2",
    "grep NoNewPrivs /proc/self/status | cut -f2",
    "touch /app/x 2>&1 || true",
    "touch /tmp/x && echo tmp-writable; rm -f /tmp/x",
    "df -k /tmp | tail -1 | tr -s ' ' | cut -d' ' -f2"
  ].join("; ")])).trim().split("\n")
  const [uid, gid, memory, capabilities, noNewPrivileges, rootWrite, tmp, tmpKb] = inside
  const limit = gatewayContainer.plan.args[gatewayContainer.plan.args.indexOf("--memory") + 1]
  const applied = uid === "1000" && gid === "1000" && memory === limit && capabilities === "0000000000000000" && noNewPrivileges === "1" && /Read-only/.test(rootWrite ?? "") && tmp === "tmp-writable" && Number(tmpKb) === 64 * 1024
  if (!applied) throw new Error(`the gateway container does not run as its pod spec says: ${JSON.stringify(inside)}`)
  figure(`pod spec applied, read inside a gateway container: uid/gid ${uid}:${gid}, memory limit ${Number(memory) / 2 ** 20} MiB, no capability, no new privileges, root read-only, /tmp a ${Number(tmpKb) / 1024} MiB emptyDir`)
  done("installed")

  step("the ingress: Debian's nginx configured from the chart's Ingress, TLS with a certificate made here")
  const ingress = objects.find((o) => o.kind === "Ingress")!
  mkdirSync(`${work}/nginx`, { recursive: true })
  await sh("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
    "-subj", `/CN=${IngressHost}`, "-addext", `subjectAltName=DNS:${IngressHost}`,
    "-keyout", `${work}/nginx/tls.key`, "-out", `${work}/nginx/tls.crt`
  ])
  const ca = readFileSync(`${work}/nginx/tls.crt`, "utf8")
  const ingressPort = 18443
  const endpointsOf = (service: string, port: string | number) => {
    const serviceObject = objects.find((o) => o.kind === "Service" && o.metadata.name === service)!
    const servicePort = (serviceObject["spec"].ports as Array<{ name: string; port: number }>).find((p) => p.name === port || p.port === port)!
    return [...deployed.values()].flat().filter((pod) => pod.plan.aliases.includes(service)).map((pod) => `${pod.ip}:${servicePort.port}`)
  }
  writeFileSync(`${work}/nginx/nginx.conf`, nginxConfig({ ingress, endpoints: endpointsOf, listen: { host: "127.0.0.1", port: ingressPort }, certificate: { cert: `${work}/nginx/tls.crt`, key: `${work}/nginx/tls.key` }, prefix: `${work}/nginx` }))
  await sh("nginx", ["-t", "-c", `${work}/nginx/nginx.conf`, "-p", `${work}/nginx`])
  const nginx = startProcess("nginx", ["-c", `${work}/nginx/nginx.conf`, "-p", `${work}/nginx`], `${work}/nginx/stdout.log`)
  onCleanup("nginx", () => stopProcess(nginx))
  const via = (method: string, path: string, options?: Parameters<typeof throughIngress>[4]) => throughIngress(ingressPort, ca, method, path, options)
  await waitFor("nginx answering", 20_000, async () => ((await via("GET", "/api/v1/openapi.json")).status === 200 ? true : undefined))
  done(`https://${IngressHost}:${ingressPort} (127.0.0.1) -> ${endpointsOf(nameOf("gateway"), "http").join(", ")}`)

  step("Prometheus: scrape configuration from the ServiceMonitor, rules from the PrometheusRule")
  const monitor = objects.find((o) => o.kind === "ServiceMonitor")!
  const services = objects.filter((o) => o.kind === "Service")
  const endpointPods = [...deployed.values()].flat().map((pod) => ({
    name: pod.plan.name,
    ip: pod.ip,
    labels: pod.plan.labels,
    containers: pod.plan.containers.map((c) => ({ name: c.name, ports: c.ports }))
  }))
  const rule = objects.find((o) => o.kind === "PrometheusRule")
  mkdirSync(`${work}/prometheus/data`, { recursive: true })
  if (rule !== undefined) writeFileSync(`${work}/prometheus/rules.yaml`, stringify(rule["spec"]))
  const scrape = scrapeConfigs(monitor, services, endpointPods, Namespace)
  writeFileSync(
    `${work}/prometheus/prometheus.yml`,
    stringify({ global: { scrape_interval: `${ScrapeSeconds}s`, evaluation_interval: `${ScrapeSeconds}s` }, ...(rule !== undefined ? { rule_files: [`${work}/prometheus/rules.yaml`] } : {}), scrape_configs: scrape })
  )
  await sh("promtool", ["check", "config", `${work}/prometheus/prometheus.yml`])
  const prometheusPort = 19090
  const prometheus = startProcess("prometheus", [`--config.file=${work}/prometheus/prometheus.yml`, `--storage.tsdb.path=${work}/prometheus/data`, `--web.listen-address=127.0.0.1:${prometheusPort}`], `${work}/prometheus/log`)
  onCleanup("Prometheus", () => stopProcess(prometheus))
  const prometheusUrl = `http://127.0.0.1:${prometheusPort}`
  const targets = scrape.flatMap((config) => config.static_configs).length
  await waitFor("every target scraped and up", 60_000, async () => {
    const up = (await promQuery(prometheusUrl, "/api/v1/query", { query: "up" })).result as Array<{ value: [number, string] }>
    return up.length === targets && up.every((series) => series.value[1] === "1") ? true : undefined
  })
  figure(`targets up: ${targets} (${[...new Set(scrape.flatMap((c) => c.static_configs.map((s) => s.labels.job)))].join(", ")})`)
  const workloadStarted = Date.now()
  done("scraping, before any workload, so that rate() sees every increase")


  step("a known workload through the ingress: reads, writes, a webhook delivery, a 404, a 429")
  const admintools = deployed.get(nameOf("admintools"))![0]!
  const cli = async (...args: ReadonlyArray<string>) => JSON.parse(await sh("podman", ["exec", admintools.containers[0]!.id, "portfolio", ...args, "--json"]))
  const admin = "admin@rehearsal.localhost"
  const writePat = (await cli("pat", "create", "--tenant", "rehearsal", "--email", admin, "--scope", "write")).token as string
  const readPat = (await cli("pat", "create", "--tenant", "rehearsal", "--email", admin, "--scope", "read")).token as string
  const hook = await cli("webhook", "create", "--tenant", "rehearsal", "--url", receiver.url("/rehearsal"))
  figure(`operator (kubectl exec deploy/admintools -- portfolio ...): 2 PATs and webhook ${hook.id ?? hook.subscription?.id ?? "?"}`)
  const statuses = new Map<number, number>()
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
  const expectStatus = async (want: number, call: Promise<{ status: number; body: string }>, what: string) => {
    const reply = await call
    count(reply.status)
    if (reply.status !== want) throw new Error(`${what}: ${reply.status}, expected ${want}: ${reply.body.slice(0, 300)}`)
    return reply
  }
  const reference = await expectStatus(200, via("GET", "/api/v1/docs"), "the API reference page")
  if (!reference.body.includes("<html") && !reference.body.includes("<!doctype")) throw new Error("the reference page is not HTML")
  await expectStatus(200, via("GET", "/api/v1/docs/api-reference.js"), "the reference page's script")
  const openapi = JSON.parse((await expectStatus(200, via("GET", "/api/v1/openapi.json"), "the OpenAPI document")).body) as { servers: Array<{ url: string }> }
  figure(`OpenAPI servers: ${openapi.servers.map((s) => s.url).join(", ")}`)
  const consolePage = await expectStatus(200, via("GET", "/console/sign-in"), "the console's sign-in page")
  if (!/<form/i.test(consolePage.body)) throw new Error("the console's sign-in page has no form")
  // Application writes are operators' (the admin API; the public API reads): through the CLI, as a team would seed.
  for (const code of ["REH-1", "REH-2", "REH-3"]) {
    await sh("podman", ["exec", "-i", admintools.containers[0]!.id, "portfolio", "app", "put", "--tenant", "rehearsal", "--json"], {
      input: JSON.stringify({ code, name: `Rehearsed ${code}`, status: "ACTIVE" })
    })
  }
  const auth = (token: string) => ({ authorization: `Bearer ${token}` })
  for (let i = 0; i < 40; i++) await expectStatus(200, via("GET", "/api/v1/referentiel/applications", { headers: auth(readPat) }), "list applications")
  await expectStatus(200, via("GET", "/api/v1/referentiel/applications/REH-1", { headers: auth(readPat) }), "read one application")
  await expectStatus(200, via("GET", "/api/v1/referentiel/functions", { headers: auth(readPat) }), "the functions tree")
  await expectStatus(404, via("GET", "/api/v1/referentiel/applications/NOPE-404", { headers: auth(readPat) }), "an unknown application")
  await expectStatus(404, via("GET", "/api/v1/no-such-endpoint", { headers: auth(readPat) }), "an unknown path")
  // A public write, from an address the client claims and nginx replaces with the one it sees.
  await expectStatus(201, via("POST", "/api/v1/tenant/invitations", { headers: { ...auth(writePat), "x-forwarded-for": "203.0.113.77" }, body: { email: "invited@rehearsal.localhost", arbRole: "viewer" } }), "an invitation")
  if ((await receiver.waitFor("/rehearsal", 3, 30_000)).length < 3) throw new Error(`the webhook receiver got ${receiver.at("/rehearsal").length} deliveries of 3 application writes`)
  // Updates a scrape apart until a dispatcher's histograms have moved between two scrapes: a series
  // is born at its first observation, and rate() shows nothing of a burst that came before it.
  let rounds = 0
  while (!(await hasSamples(prometheusUrl, "sum(rate(portfolio_webhook_delivery_lag_seconds_count[20s])) > 0"))) {
    if (++rounds > 8) throw new Error("the dispatchers' delivery histograms did not move in 8 rounds of writes")
    await sleep(ScrapeSeconds * 1000 + 500)
    for (const code of ["REH-1", "REH-2"]) {
      await sh("podman", ["exec", "-i", admintools.containers[0]!.id, "portfolio", "app", "put", "--tenant", "rehearsal", "--json"], {
        input: JSON.stringify({ code, name: `Rehearsed ${code}, round ${rounds}`, status: "ACTIVE" })
      })
    }
    await receiver.waitFor("/rehearsal", 3 + 2 * rounds, 30_000)
    await sleep(ScrapeSeconds * 1000 + 500)
  }
  const deliveries = receiver.at("/rehearsal")
  figure(`webhook deliveries received: ${deliveries.length} (${[...new Set(deliveries.map((d) => JSON.parse(d.body).type))].join(", ")}), signed: ${deliveries.every((d) => typeof d.headers["webhook-signature"] === "string")}`)
  // A bad minute of the referential: both pods frozen, then killed. A client gives up on a request
  // that waits (the gateway records it aborted), the next gets a 5xx; the kubelet restarts the
  // containers, which are ready again before the workload goes on.
  const referentials = deployed.get(nameOf("referential"))!
  for (const pod of referentials) pod.held = true
  for (const pod of referentials) await sh("podman", ["pause", pod.containers[0]!.id])
  await via("GET", "/api/v1/referentiel/applications/REH-1", { headers: auth(readPat), abortAfterMs: 1500 })
  for (const pod of referentials) await sh("podman", ["unpause", pod.containers[0]!.id])
  for (const pod of referentials) await sh("podman", ["kill", pod.containers[0]!.id])
  // Two answers a scrape apart: a counter's series is born at its first increment, so rate() sees
  // an error only from the second one on, as it would on a real bad minute.
  let unavailable = { status: 0, body: "{}" }
  for (const attempt of [1, 2]) {
    if (attempt === 2) await sleep(ScrapeSeconds * 1000 + 1000)
    unavailable = await via("GET", "/api/v1/referentiel/applications/REH-1", { headers: auth(readPat) })
    count(unavailable.status)
    if (unavailable.status < 500) throw new Error(`with every referential pod down, the gateway answered ${unavailable.status}`)
  }
  const restartStarted = Date.now()
  for (const pod of referentials) pod.held = false
  await kubelet.awaitReady("the referential after its restart", referentials, 120_000)
  figure(`referential pods frozen then killed: a client's abandoned request, then twice ${unavailable.status} (${JSON.parse(unavailable.body).errorCode ?? ""}); restarted by the kubelet and ready again in ${seconds(restartStarted)}`)
  await expectStatus(200, via("GET", "/api/v1/referentiel/applications/REH-1", { headers: auth(readPat) }), "a read after the restart")
  // Unauthenticated calls are limited per client address: the 61st in a minute is refused.
  let refused = 0
  for (let i = 0; i < 70 && refused === 0; i++) {
    const reply = await via("GET", "/api/v1/referentiel/applications", { headers: auth("pat_not_a_token") })
    count(reply.status)
    if (reply.status === 429) refused++
  }
  if (refused === 0) throw new Error("no 429 after 70 unauthenticated requests from one address")
  figure(`answers through the ingress: ${[...statuses].sort().map(([status, n]) => `${n} x ${status}`).join(", ")}`)
  const audit = (await cli("audit", "--tenant", "rehearsal")) as { entries?: Array<Record<string, unknown>> } | Array<Record<string, unknown>>
  const entries = (Array.isArray(audit) ? audit : (audit.entries ?? [])).filter((entry) => JSON.stringify(entry).includes("invited@rehearsal.localhost"))
  const ips = new Set(entries.map((entry) => String(entry["ip"])))
  if (ips.size !== 1 || !ips.has("127.0.0.1")) {
    throw new Error(`the security log's address of the invitation is ${[...ips].join(", ") || "absent"}: expected the client's 127.0.0.1, never the claimed 203.0.113.77 nor nginx's ${Network.gateway}`)
  }
  figure(`the invitation's address in the security log: 127.0.0.1, the client's (sent with X-Forwarded-For: 203.0.113.77; nginx is ${Network.gateway})`)
  const perUpstream = requestsPerUpstream(readFileSync(`${work}/nginx/access.log`, "utf8"))
  const gateways = deployed.get(nameOf("gateway"))!
  const perGateway = gateways.map((pod) => ({ pod: pod.plan.name, requests: perUpstream.get(`${pod.ip}:8080`) ?? 0 }))
  for (const { pod, requests } of perGateway) if (requests === 0) throw new Error(`gateway ${pod} got no request through the ingress`)
  figure(`requests through the ingress per gateway replica: ${perGateway.map(({ pod, requests }) => `${pod.replace(`${Release}-architecture-portfolio-`, "")} ${requests}`).join(", ")}`)
  done("workload served")

  step("the dashboard: every panel's query through Prometheus's HTTP API")
  // Two more scrapes, so that rate() over the workload has two samples after it.
  await sleep(ScrapeSeconds * 2500)
  const series = Number((await promQuery(prometheusUrl, "/api/v1/query", { query: 'count({__name__=~".+"})' })).result[0].value[1])
  figure(`series scraped: ${series}`)
  const dashboard = JSON.parse(readFileSync(`${repoRoot}deploy/grafana/portfolio.json`, "utf8"))
  const jobs = (await promQuery(prometheusUrl, "/api/v1/label/job/values", { "match[]": "target_info" })) as Array<string>
  const variables = { job: jobs, datasource: ["prometheus"] }
  const rangeOf = { start: String(workloadStarted / 1000), end: String(Date.now() / 1000), step: String(ScrapeSeconds) }
  const hasData = async (expr: string) => {
    const result = (await promQuery(prometheusUrl, "/api/v1/query_range", { query: substitute(expr, variables, ScrapeSeconds), ...rangeOf })).result as Array<{ values: Array<[number, string]> }>
    return result.some((s) => s.values.some(([, value]) => value !== "NaN"))
  }
  const queries = panelQueries(dashboard)
  const empty: Array<string> = []
  for (const query of queries) if (!(await hasData(query.expr))) empty.push(`${query.panel}: ${query.expr}`)
  figure(`panels with data: ${queries.length - empty.length} of ${queries.length} queries (${new Set(queries.map((q) => q.panel)).size} panels), job=${jobs.join("|")}`)
  if (empty.length > 0) throw new Error(`dashboard queries without data after the workload:\n  ${empty.join("\n  ")}`)
  // Negative control: a query naming a metric no service exports must be found empty by the same check.
  if (await hasData('sum(rate(portfolio_no_such_metric_total{job=~"$job"}[$__rate_interval]))')) throw new Error("negative control: a query of a metric that does not exist returned data")
  figure("negative control: a panel query naming a metric that does not exist is reported empty")
  done("every panel has data")

  // Their unit tests and the negative control run in npm test (test/deploy/alerts.test.ts), on the same rendered rules.
  step("alerting rules: promtool check, and loaded and evaluating in the running Prometheus")
  if (rule === undefined) throw new Error("the chart rendered no PrometheusRule with metrics.prometheusRule.enabled")
  await sh("promtool", ["check", "rules", `${work}/prometheus/rules.yaml`])
  const groups = (await promQuery(prometheusUrl, "/api/v1/rules", {})).groups as Array<{ name: string; rules: Array<{ type: string; health: string; name: string; state?: string }> }>
  const rules = groups.flatMap((g) => g.rules)
  const unhealthy = rules.filter((r) => r.health !== "ok" && r.health !== "unknown")
  if (unhealthy.length > 0) throw new Error(`rules that do not evaluate: ${unhealthy.map((r) => r.name).join(", ")}`)
  const firing = rules.filter((r) => r.type === "alerting" && r.state === "firing").map((r) => r.name)
  figure(`rules loaded: ${rules.filter((r) => r.type === "alerting").length} alerts, ${rules.filter((r) => r.type === "recording").length} recording rules in ${groups.length} groups; firing now: ${firing.length === 0 ? "none" : firing.join(", ")}`)
  done("alerts checked")

  step("one trace: the ingress request through gateway and referential; a write through the outbox, NATS and the webhook's POST")
  const traceId = randomBytes(16).toString("hex")
  const clientSpan = randomBytes(8).toString("hex")
  await expectStatus(200, via("GET", "/api/v1/referentiel/applications/REH-2", { headers: { ...auth(readPat), traceparent: `00-${traceId}-${clientSpan}-01` } }), "a traced read")
  const readTrace = await collector.trace(traceId, (t) => t.some((s) => s.service === "gateway" && s.kind === ServerKind) && t.some((s) => s.service === "referential" && s.kind === ServerKind))
  const gatewaySpan = readTrace.find((s) => s.service === "gateway" && s.kind === ServerKind)!
  const referentialSpan = readTrace.find((s) => s.service === "referential" && s.kind === ServerKind)!
  if (gatewaySpan.parentSpanId !== clientSpan || referentialSpan.parentSpanId !== gatewaySpan.spanId) throw new Error("the read's spans are not one chain from the client")
  figure(`trace ${traceId}: client -> nginx (traceparent passed on) -> gateway "${gatewaySpan.name}" (client.address ${String(gatewaySpan.attributes["client.address"])}) -> referential "${referentialSpan.name}"`)
  const writeTrace = randomBytes(16).toString("hex")
  const referentialPod = deployed.get(nameOf("referential"))![0]!
  const put = await adminCall(secretOf(objects, "internal-secret"), `http://${referentialPod.ip}:8083`, "referential", "PUT", `/admin/tenants/${tenantId()}/applications/REH-TRACE`, {
    body: { name: "Traced", status: "ACTIVE" },
    headers: { traceparent: `00-${writeTrace}-${randomBytes(8).toString("hex")}-01` }
  })
  if (put.status !== 200 && put.status !== 201) throw new Error(`traced write: ${put.status} ${put.text}`)
  const isPost = (s: { service: string; kind: number; name: string }) => s.service === "webhook-dispatcher" && s.kind === ClientKind && s.name === "POST"
  const chain = await collector.trace(writeTrace, (t) => t.some(isPost) && t.some((s) => s.kind === ProducerKind) && t.some((s) => s.kind === ConsumerKind))
  const producer = chain.find((s) => s.kind === ProducerKind)!
  const consumer = chain.find((s) => s.kind === ConsumerKind)!
  const post = chain.find(isPost)!
  figure(`trace ${writeTrace}: referential "${producer.name}" -> NATS -> ${consumer.service} "${consumer.name}" -> POST ${String(post.attributes["url.full"] ?? post.attributes["server.address"] ?? "")} (${post.attributes["http.response.status_code"]})`)
  done("traces followed across processes")

  step("negative controls: the runner fails on what it must fail on")
  const strange = objects.map((o) => (o.kind === "Deployment" && o.metadata.name === nameOf("gateway") ? { ...o, spec: { ...o["spec"], template: { ...o["spec"].template, spec: { ...o["spec"].template.spec, hostPID: true } } } } : o))
  try {
    planWorkloads({ namespace: Namespace, objects: strange })
    throw new Error("negative control: a pod spec with hostPID was run")
  } catch (error) {
    if (!(error instanceof UnknownField)) throw error
    figure(`an unknown pod-spec field fails the run: ${error.message.split(":")[0]}`)
  }
  const broken = await brokenImage()
  onCleanup("broken image", () => outcome("podman", ["rmi", "--force", broken]))
  const gatewayWorkload = workloads.find((w) => w.name === nameOf("gateway"))!
  const brokenWorkload: Workload = {
    ...gatewayWorkload,
    name: `${gatewayWorkload.name}-broken`,
    replicas: 1,
    pods: [{ ...gatewayWorkload.pods[0]!, name: "portfolio-rehearsal-broken", aliases: [], containers: gatewayWorkload.pods[0]!.containers.map((c) => ({ ...c, image: broken, args: c.args.map((a) => (a === ImageName ? broken : a)) })) }]
  }
  const brokenStarted = Date.now()
  // 30 s: the pods of the real image were ready in under 10 s; and the failure must be the crash
  // (the container exited and was restarted), not a slow start.
  const failed = await kubelet.deploy(brokenWorkload, 30_000).then(() => undefined, (error: Error) => error)
  if (failed === undefined) throw new Error("negative control: a gateway whose entry point throws became ready")
  const restarts = Number(/\(restarts (\d+)\)/.exec(failed.message)?.[1] ?? "0")
  if (restarts < 1) throw new Error(`negative control: the broken gateway failed without crashing: ${failed.message.split("\n")[0]}`)
  figure(`an image whose entry point is broken fails the run: ${failed.message.split("\n")[0]} (${seconds(brokenStarted)})`)
  done("every negative control failed as it must")

  console.log(`\n==> rehearsal passed in ${seconds(runStarted)}`)
}

const short = (name: string) => name.replace(`${Release}-architecture-portfolio-`, "")
const nameOf = (component: string) => `${Release}-architecture-portfolio-${component}`

const secretOf = (objects: ReadonlyArray<K8sObject>, key: string) => {
  const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name === `${Release}-architecture-portfolio`)!
  return Buffer.from(secret["data"][key] as string, "base64").toString("utf8")
}

/** The first tenant's id, as the post-install Job printed it. */
let tenantIdOfJob: string | undefined
const tenantId = () => {
  if (tenantIdOfJob === undefined) throw new Error("the first-tenant Job printed no tenantId")
  return tenantIdOfJob
}

const runJobOrPod = (kubelet: Kubelet, workload: Workload) => kubelet.runJob(workload.kind === "Pod" ? { ...workload, backoffLimit: 0 } : workload)

/** A copy of the image whose gateway entry point throws at once, as a bad build would. */
const brokenImage = async () => {
  const name = "localhost/architecture-portfolio:rehearsal-broken"
  const container = (await sh("buildah", ["from", "--pull-never", ImageName])).trim()
  try {
    const file = `/var/tmp/portfolio-rehearsal-broken-${process.pid}.mjs`
    writeFileSync(file, 'throw new Error("a broken build")\n')
    await sh("buildah", ["copy", "--chmod", "0444", container, file, "/app/dist/gateway/main.mjs"])
    rmSync(file)
    await sh("buildah", ["commit", "--format", "docker", container, name])
  } finally {
    await outcome("buildah", ["rm", container])
  }
  return name
}

/**
 * Each cleanup within CleanupWithinMs: one that waits forever (a server's close() on a connection
 * whose peer vanished with its pod did, twice) must not hold the run; it fails it, saying which.
 * A cleanup that fails is reported and the next ones still run (what is left is checked below).
 */
const CleanupWithinMs = 150_000
const Late = Symbol("late")

/** Whether every cleanup finished in time. */
const cleanup = async () => {
  let finished = true
  for (const { what, run } of cleanups.reverse()) {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<typeof Late>((resolve) => {
      timer = setTimeout(() => resolve(Late), CleanupWithinMs)
    })
    try {
      if ((await Promise.race([run(), late])) === Late) {
        finished = false
        console.error(`    cleanup of ${what} not finished after ${CleanupWithinMs / 1000} s: left running`)
      }
    } catch (error) {
      console.error(`    cleanup of ${what} failed: ${String(error)}`)
    } finally {
      clearTimeout(timer)
    }
  }
  return finished
}

let exitCode = 0
try {
  await main()
} catch (error) {
  exitCode = 1
  console.error(`\n==> rehearsal FAILED (${seconds(stepStarted)} into the step): ${error instanceof Error ? error.message : String(error)}`)
} finally {
  console.log("\n==> stopping and removing everything the rehearsal started")
  if (!(await cleanup())) exitCode = 1
  const left = (await outcome("podman", ["ps", "-a", "--filter", "name=rel-architecture-portfolio", "--format", "{{.Names}}"])).stdout.trim()
  if (left !== "") {
    console.error(`    containers left: ${left}`)
    exitCode = 1
  }
}
process.exit(exitCode)
