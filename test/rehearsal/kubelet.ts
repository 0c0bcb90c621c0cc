import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { connect } from "node:net"
import { dirname, join } from "node:path"
import type { ContainerPlan, PodPlan, Probe, Workload } from "./podSpec.js"
import { outcome, sh, sleep } from "./shell.js"

/**
 * The rehearsal's kubelet: runs planned pods as podman pods on one network, where each pod is
 * reachable by the names of the Services that select it, polls their probes as a kubelet does
 * (startup, then readiness and liveness, each on its period, threshold and timeout, from outside
 * the pod), restarts a container whose liveness fails or which exits under restartPolicy Always, and
 * runs Jobs to completion within their backoffLimit and activeDeadlineSeconds.
 */
export interface KubeletOptions {
  readonly network: string
  /** Names the pods resolve beyond the Services (PostgreSQL, NATS, the OTLP receiver on the host). */
  readonly hosts: Readonly<Record<string, string>>
  readonly workDir: string
  readonly log: (line: string) => void
}

interface ContainerState {
  readonly plan: ContainerPlan
  readonly id: string
  started: boolean
  ready: boolean
  restarts: number
  failures: { startup: number; readiness: number; liveness: number }
  successes: number
}

export interface RunningPod {
  readonly plan: PodPlan
  readonly ip: string
  readonly containers: ReadonlyArray<ContainerState>
  readonly startedAt: number
  readyAt: number | undefined
  stopped: boolean
  /** While held, the kubelet neither probes nor restarts it (a test freezing or killing it on purpose). */
  held: boolean
}

const probeOnce = async (probe: Probe, ip: string, containerId: string): Promise<boolean> => {
  const timeoutMs = probe.timeoutSeconds * 1000
  if (probe.kind === "exec") return (await outcome("podman", ["exec", containerId, ...probe.command], { timeoutMs })).code === 0
  if (probe.kind === "tcp") {
    return new Promise((resolve) => {
      const socket = connect({ host: ip, port: probe.port, timeout: timeoutMs })
      socket.once("connect", () => (socket.destroy(), resolve(true)))
      socket.once("timeout", () => (socket.destroy(), resolve(false)))
      socket.once("error", () => resolve(false))
    })
  }
  if (probe.scheme === "https") throw new Error("https probes are not run here")
  return new Promise((resolve) => {
    const call = request({ host: ip, port: probe.port, path: probe.path, method: "GET", timeout: timeoutMs, headers: { "user-agent": "kube-probe/1.33" } }, (response) => {
      response.resume()
      const status = response.statusCode ?? 0
      resolve(status >= 200 && status < 400)
    })
    call.once("timeout", () => (call.destroy(), resolve(false)))
    call.once("error", () => resolve(false))
    call.end()
  })
}

export interface ContainerStatus {
  readonly status: string
  readonly exitCode: number
}

const Gone: ContainerStatus = { status: "gone", exitCode: -1 }

/** How often at most the kubelet reads its containers' states (the kubelet's relist period). */
const RelistMs = 1_000

/**
 * The states of the kubelet's containers, read for all of them by one `podman inspect` a second at
 * most, as the kubelet's own relisting does, whoever waits for it. Each probe loop asking podman for
 * its own container every second spawned a dozen podman processes a second, which beside the drills
 * slowed every other podman command, the image's health check among them.
 */
class ContainerStates {
  #started = 0
  #startedAt = 0
  readonly #asked = new Set<string>()
  #last: { readonly number: number; readonly ids: ReadonlySet<string>; readonly states: ReadonlyMap<string, ContainerStatus> } | undefined
  #next: Promise<void> | undefined

  readonly #ids: () => ReadonlyArray<string>

  /** `ids`: the containers to read each time, beside those asked for. */
  constructor(ids: () => ReadonlyArray<string>) {
    this.#ids = ids
  }

  /**
   * The container's state, from a reading started after it was asked for (never one of before a
   * restart the caller has just made); a container podman does not know is gone.
   */
  async of(id: string): Promise<ContainerStatus> {
    const after = this.#started
    for (;;) {
      const last = this.#last
      if (last !== undefined && last.number > after && last.ids.has(id)) return last.states.get(id) ?? Gone
      this.#asked.add(id)
      this.#next ??= this.#read().finally(() => (this.#next = undefined))
      await this.#next
    }
  }

  async #read() {
    await sleep(this.#startedAt + RelistMs - Date.now())
    this.#startedAt = Date.now()
    const number = ++this.#started
    const ids = new Set([...this.#ids(), ...this.#asked])
    this.#asked.clear()
    // podman prints the containers it knows and fails for the others: their absence is the answer.
    const result = await outcome("podman", ["inspect", "--format", "{{.Id}} {{.State.Status}} {{.State.ExitCode}}", ...ids])
    const states = new Map<string, ContainerStatus>()
    for (const line of result.stdout.trim().split("\n")) {
      const [id = "", status = "", exitCode = "0"] = line.trim().split(" ")
      if (id !== "") states.set(id, { status, exitCode: Number(exitCode) })
    }
    this.#last = { number, ids, states }
  }
}

export const logsOf = async (id: string, lines = 30) => {
  const result = await outcome("podman", ["logs", "--tail", String(lines), id])
  return `${result.stdout}${result.stderr}`.trim()
}

export class Kubelet {
  readonly pods: Array<RunningPod> = []
  readonly #mounts: Array<string> = []
  readonly #states = new ContainerStates(() => this.pods.filter((pod) => !pod.stopped).flatMap((pod) => pod.containers.map((c) => c.id)))
  #stopping = false

  constructor(readonly options: KubeletOptions) {}

  /** Creates the pod's volumes, the pod on the network under its Services' names, and its containers; starts them. */
  async start(plan: PodPlan): Promise<RunningPod> {
    const volumeRefs = new Map<string, string>()
    for (const volume of plan.volumes) {
      if (volume.kind === "tmpfs") {
        // A tmpfs of the pod's own, bound into each of its containers: shared by them as an emptyDir
        // is, bounded by sizeLimit, world-writable and owned by the pod's fsGroup with the setgid bit,
        // as the kubelet makes it. (podman's tmpfs volumes refuse a size on this file system.)
        const dir = join(this.options.workDir, plan.name, volume.name)
        await this.#unmount(dir)
        mkdirSync(dir, { recursive: true })
        await sh("mount", ["-t", "tmpfs", "-o", `size=${volume.sizeBytes},${plan.fsGroup === undefined ? "mode=0777" : `mode=2777,gid=${plan.fsGroup}`}`, `rehearsal-${plan.name}-${volume.name}`, dir])
        this.#mounts.push(dir)
        volumeRefs.set(volume.name, dir)
      } else {
        const dir = join(this.options.workDir, plan.name, volume.name)
        rmSync(dir, { recursive: true, force: true })
        for (const [path, file] of Object.entries(volume.files ?? {})) {
          mkdirSync(dirname(join(dir, path)), { recursive: true })
          writeFileSync(join(dir, path), file.content)
          chmodSync(join(dir, path), file.mode)
        }
        mkdirSync(dir, { recursive: true })
        volumeRefs.set(volume.name, dir)
      }
    }
    await outcome("podman", ["pod", "rm", "--force", plan.name])
    await sh("podman", [
      "pod", "create",
      "--name", plan.name,
      "--hostname", plan.name,
      "--network", this.options.network,
      ...plan.aliases.flatMap((alias) => ["--network-alias", alias]),
      ...Object.entries(this.options.hosts).flatMap(([name, ip]) => ["--add-host", `${name}:${ip}`]),
      ...Object.entries(plan.labels).flatMap(([key, value]) => ["--label", `${key}=${value}`])
    ])
    const containers: Array<ContainerState> = []
    for (const container of plan.containers) {
      const args = container.args.map((arg) => arg.replace(/\{volume:([^}]+)\}/, (_, name: string) => volumeRefs.get(name)!))
      const id = (
        await sh(
          "podman",
          ["create", "--pod", plan.name, "--name", `${plan.name}-${container.name}`, "--no-healthcheck", "--stop-timeout", String(plan.gracePeriodSeconds), ...args],
          { env: { ...process.env, ...container.env } }
        )
      ).trim()
      containers.push({ plan: container, id, started: false, ready: false, restarts: 0, failures: { startup: 0, readiness: 0, liveness: 0 }, successes: 0 })
    }
    await sh("podman", ["pod", "start", plan.name])
    const ip = (await sh("podman", ["inspect", "--format", `{{(index .NetworkSettings.Networks "${this.options.network}").IPAddress}}`, `${plan.name}-infra`]).catch(
      async () => sh("podman", ["pod", "inspect", "--format", "{{.InfraContainerID}}", plan.name]).then((infra) =>
        sh("podman", ["inspect", "--format", `{{(index .NetworkSettings.Networks "${this.options.network}").IPAddress}}`, infra.trim()])
      )
    )).trim()
    const pod: RunningPod = { plan, ip, containers, startedAt: Date.now(), readyAt: undefined, stopped: false, held: false }
    this.pods.push(pod)
    return pod
  }

  /** Polls one container's probes until the pod stops, as the kubelet's probe workers do. */
  async #probe(pod: RunningPod, container: ContainerState, restartPolicy: PodPlan["restartPolicy"]): Promise<void> {
    const { startup, readiness, liveness } = container.plan.probes
    const period = Math.min(...[startup, readiness, liveness].filter((p) => p !== undefined).map((p) => p!.periodSeconds), 2) * 1000
    let nextLiveness = Date.now() + (liveness?.initialDelaySeconds ?? 0) * 1000
    let nextReadiness = Date.now() + (readiness?.initialDelaySeconds ?? 0) * 1000
    let nextStartup = Date.now() + (startup?.initialDelaySeconds ?? 0) * 1000
    container.started = startup === undefined
    while (!pod.stopped && !this.#stopping) {
      if (pod.held) {
        // Unprobed, it is not known to be ready: once released it must pass its probes again.
        container.ready = false
        await sleep(250)
        continue
      }
      const { status } = await this.#states.of(container.id)
      if (pod.stopped || this.#stopping || pod.held) continue
      if (status !== "running") {
        container.ready = false
        // podman says "stopped" of a process that ended until its cleanup has recorded it "exited".
        const ended = status === "exited" || status === "stopped"
        if (restartPolicy === "Always" && ended) {
          container.restarts++
          this.options.log(`  ${pod.plan.name}/${container.plan.name} exited: restarted (${container.restarts})`)
          await this.#restart(pod, container)
          continue
        }
        if (ended || status === "gone") return
        // Starting, stopping or paused by someone else: look again.
        await sleep(250)
        continue
      }
      const now = Date.now()
      if (!container.started && startup !== undefined && now >= nextStartup) {
        nextStartup = now + startup.periodSeconds * 1000
        if (await probeOnce(startup, pod.ip, container.id)) container.started = true
        else if (++container.failures.startup >= startup.failureThreshold) {
          this.options.log(`  ${pod.plan.name}/${container.plan.name}: startup probe failed ${container.failures.startup} times: restarted`)
          container.restarts++
          await this.#restart(pod, container)
        }
      }
      if (container.started && readiness !== undefined && now >= nextReadiness) {
        nextReadiness = now + readiness.periodSeconds * 1000
        if (await probeOnce(readiness, pod.ip, container.id)) {
          container.failures.readiness = 0
          if (++container.successes >= readiness.successThreshold) container.ready = true
        } else {
          container.successes = 0
          if (++container.failures.readiness >= readiness.failureThreshold) container.ready = false
        }
      } else if (container.started && readiness === undefined) container.ready = true
      if (container.started && liveness !== undefined && now >= nextLiveness) {
        nextLiveness = now + liveness.periodSeconds * 1000
        if (await probeOnce(liveness, pod.ip, container.id)) container.failures.liveness = 0
        else if (++container.failures.liveness >= liveness.failureThreshold) {
          this.options.log(`  ${pod.plan.name}/${container.plan.name}: liveness probe failed ${container.failures.liveness} times: restarted`)
          container.restarts++
          await this.#restart(pod, container)
        }
      }
      if (pod.readyAt === undefined && pod.containers.every((c) => c.ready)) pod.readyAt = Date.now()
      await sleep(Math.min(period, 1000))
    }
  }

  async #restart(pod: RunningPod, container: ContainerState) {
    container.started = container.plan.probes.startup === undefined
    container.failures = { startup: 0, readiness: 0, liveness: 0 }
    container.successes = 0
    await outcome("podman", ["restart", "--time", String(pod.plan.gracePeriodSeconds), container.id])
  }

  /** Starts every replica of a Deployment and waits until each is ready; a pod that crashes or never gets ready throws with its logs. */
  async deploy(workload: Workload, deadlineMs: number): Promise<ReadonlyArray<RunningPod>> {
    const pods: Array<RunningPod> = []
    for (const plan of workload.pods) pods.push(await this.start(plan))
    for (const pod of pods) for (const container of pod.containers) void this.#probe(pod, container, pod.plan.restartPolicy)
    await this.awaitReady(`${workload.kind}/${workload.name}`, pods, deadlineMs)
    return pods
  }

  /** Waits until every container of these pods is ready; a crash loop or the deadline throws with their logs. */
  async awaitReady(what: string, pods: ReadonlyArray<RunningPod>, deadlineMs: number) {
    const deadline = Date.now() + deadlineMs
    const restartsBefore = new Map(pods.flatMap((pod) => pod.containers.map((c) => [c, c.restarts] as const)))
    while (pods.some((pod) => !pod.containers.every((c) => c.ready))) {
      const crashing = pods.flatMap((pod) => pod.containers.filter((c) => c.restarts - (restartsBefore.get(c) ?? 0) >= 3).map((c) => ({ pod, c })))
      if (crashing.length > 0 || Date.now() > deadline) {
        const stuck = crashing.length > 0 ? crashing : pods.filter((pod) => !pod.containers.every((c) => c.ready)).flatMap((pod) => pod.containers.map((c) => ({ pod, c })))
        const details = await Promise.all(stuck.map(async ({ pod, c }) => `${pod.plan.name}/${c.plan.name} (restarts ${c.restarts}):\n${await logsOf(c.id)}`))
        throw new Error(`${what} is not ready ${crashing.length > 0 ? "(crash loop)" : `after ${deadlineMs / 1000} s`}:\n${details.join("\n")}`)
      }
      await sleep(250)
    }
  }

  /** Runs a Job's pod until every container exits 0, again up to backoffLimit times, within activeDeadlineSeconds. */
  async runJob(workload: Workload): Promise<{ readonly attempts: number; readonly seconds: number; readonly logs: string }> {
    const started = Date.now()
    const deadline = started + (workload.activeDeadlineSeconds ?? 600) * 1000
    const plan = workload.pods[0]!
    for (let attempt = 1; attempt <= workload.backoffLimit + 1; attempt++) {
      const pod = await this.start(plan)
      let codes: Array<number> | undefined
      while (codes === undefined) {
        if (Date.now() > deadline) {
          await this.remove(pod)
          throw new Error(`Job/${workload.name} passed its activeDeadlineSeconds`)
        }
        const states = await Promise.all(pod.containers.map((c) => this.#states.of(c.id)))
        if (states.every((s) => s.status === "exited" || s.status === "stopped")) codes = states.map((s) => s.exitCode)
        else await sleep(500)
      }
      const logs = (await Promise.all(pod.containers.map(async (c) => `[${c.plan.name}]\n${await logsOf(c.id, 200)}`))).join("\n")
      await this.remove(pod)
      if (codes.every((code) => code === 0)) return { attempts: attempt, seconds: (Date.now() - started) / 1000, logs }
      this.options.log(`  Job/${workload.name}: attempt ${attempt} failed (exit codes ${codes.join(", ")})\n${logs.split("\n").slice(-10).join("\n")}`)
    }
    throw new Error(`Job/${workload.name} failed ${workload.backoffLimit + 1} times (backoffLimit ${workload.backoffLimit})`)
  }

  async #unmount(dir: string) {
    while ((await outcome("mountpoint", ["-q", dir])).code === 0) await sh("umount", [dir])
  }

  async remove(pod: RunningPod) {
    pod.stopped = true
    await outcome("podman", ["pod", "rm", "--force", "--time", String(pod.plan.gracePeriodSeconds), pod.plan.name], { timeoutMs: 120_000 })
  }

  /** Stops every pod (SIGTERM, then SIGKILL after its grace period) and removes pods and volumes. */
  async stopAll() {
    this.#stopping = true
    for (const pod of this.pods) pod.stopped = true
    await Promise.all(this.pods.map((pod) => outcome("podman", ["pod", "rm", "--force", "--time", String(pod.plan.gracePeriodSeconds), pod.plan.name], { timeoutMs: 120_000 })))
    for (const dir of this.#mounts) await this.#unmount(dir)
    rmSync(this.options.workDir, { recursive: true, force: true })
  }
}
