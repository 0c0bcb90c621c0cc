/**
 * A rendered pod template, read as a kubelet would, turned into what podman runs: one podman pod per
 * Kubernetes pod (its containers share the network namespace, as in Kubernetes), each container with
 * its command, environment (Secrets and ConfigMaps resolved), user, root file system, capabilities,
 * volumes and memory and CPU limits; its probes kept for the rehearsal's kubelet to poll.
 *
 * Every field of the pod template is classified below: honoured, or not honoured with the reason
 * (printed by the rehearsal). A field the table does not know throws: a chart change that adds one
 * must decide what it means here, rather than run as if it were not there.
 */

export type K8sObject = {
  readonly apiVersion?: string
  readonly kind: string
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> }
  readonly [key: string]: any
}

export class UnknownField extends Error {
  constructor(readonly path: string) {
    super(`the rehearsal's kubelet does not know the pod-spec field ${path}: decide in test/rehearsal/podSpec.ts what it means here`)
  }
}

/** honoured: applied below. A string: seen and not applied, for that reason. A nested table: an object walked further. */
type Rule = "honoured" | { readonly notHonoured: string } | Table | { readonly each: Table }
interface Table {
  readonly [field: string]: Rule
}

const scheduling = { notHonoured: "one machine: no scheduler" }
const probe: Table = {
  httpGet: { path: "honoured", port: "honoured", scheme: "honoured" },
  tcpSocket: { port: "honoured" },
  exec: { command: "honoured" },
  initialDelaySeconds: "honoured",
  periodSeconds: "honoured",
  timeoutSeconds: "honoured",
  failureThreshold: "honoured",
  successThreshold: "honoured",
  terminationGracePeriodSeconds: { notHonoured: "a liveness restart stops the container with the pod's grace period" }
}
const securityContext: Table = {
  runAsUser: "honoured",
  runAsGroup: "honoured",
  runAsNonRoot: "honoured",
  readOnlyRootFilesystem: "honoured",
  allowPrivilegeEscalation: "honoured",
  privileged: "honoured",
  capabilities: { drop: "honoured", add: "honoured" },
  seccompProfile: { type: "honoured" },
  fsGroup: "honoured",
  supplementalGroups: "honoured",
  fsGroupChangePolicy: { notHonoured: "volumes are made with the group at once" }
}
const container: Table = {
  name: "honoured",
  image: "honoured",
  imagePullPolicy: "honoured",
  command: "honoured",
  args: "honoured",
  workingDir: "honoured",
  env: { each: { name: "honoured", value: "honoured", valueFrom: { secretKeyRef: "honoured", configMapKeyRef: "honoured", fieldRef: "honoured" } } },
  envFrom: { each: { secretRef: "honoured", configMapRef: "honoured", prefix: "honoured" } },
  ports: { each: { name: "honoured", containerPort: "honoured", protocol: "honoured" } },
  resources: {
    limits: "honoured",
    requests: { notHonoured: "requests only place pods on nodes; the limits are applied" }
  },
  securityContext,
  volumeMounts: { each: { name: "honoured", mountPath: "honoured", readOnly: "honoured", subPath: "honoured" } },
  livenessProbe: probe,
  readinessProbe: probe,
  startupProbe: probe
}
const podSpec: Table = {
  containers: { each: container },
  restartPolicy: "honoured",
  terminationGracePeriodSeconds: "honoured",
  securityContext,
  volumes: {
    each: {
      name: "honoured",
      emptyDir: { sizeLimit: "honoured", medium: "honoured" },
      secret: { secretName: "honoured", items: "honoured", defaultMode: "honoured", optional: "honoured" },
      configMap: { name: "honoured", items: "honoured", defaultMode: "honoured", optional: "honoured" }
    }
  },
  automountServiceAccountToken: "honoured",
  enableServiceLinks: "honoured",
  serviceAccountName: { notHonoured: "no Kubernetes API server: no service account, and no token is mounted" },
  imagePullSecrets: { notHonoured: "the image is in the local store (pullPolicy Never)" },
  nodeSelector: scheduling,
  affinity: scheduling,
  tolerations: scheduling,
  topologySpreadConstraints: scheduling,
  priorityClassName: scheduling
}

/** Walks a value against its table: the fields seen but not applied are collected, an unknown one throws. */
const walk = (value: unknown, table: Table, path: string, notHonoured: Map<string, string>) => {
  if (value === null || typeof value !== "object") return
  for (const [field, inner] of Object.entries(value as Record<string, unknown>)) {
    const rule = table[field]
    const here = `${path}.${field}`
    if (rule === undefined) throw new UnknownField(here)
    if (rule === "honoured") continue
    if ("notHonoured" in rule && typeof rule.notHonoured === "string") {
      notHonoured.set(here.replace(/\[\d+\]/g, "[]"), rule.notHonoured)
    } else if ("each" in rule && typeof rule.each === "object") {
      if (Array.isArray(inner)) inner.forEach((item, index) => walk(item, rule.each as Table, `${here}[${index}]`, notHonoured))
    } else {
      walk(inner, rule as Table, here, notHonoured)
    }
  }
}

/** What a pod template's metadata may carry; the labels select it for Services, the rest is for people. */
const podMetadata: Table = { labels: "honoured", annotations: "honoured", name: "honoured" }

export interface Probe {
  readonly kind: "http" | "tcp" | "exec"
  readonly port: number
  readonly path: string
  readonly scheme: "http" | "https"
  readonly command: ReadonlyArray<string>
  readonly initialDelaySeconds: number
  readonly periodSeconds: number
  readonly timeoutSeconds: number
  readonly failureThreshold: number
  readonly successThreshold: number
}

export interface ContainerPlan {
  readonly name: string
  readonly image: string
  /** `podman create` arguments after the pod and name, up to and including the image and its arguments. */
  readonly args: ReadonlyArray<string>
  /** Environment handed to `podman create` (`--env NAME` reads it from there, so values may hold new lines). */
  readonly env: Readonly<Record<string, string>>
  readonly probes: { readonly startup?: Probe; readonly readiness?: Probe; readonly liveness?: Probe }
  readonly ports: ReadonlyArray<{ readonly name?: string; readonly containerPort: number }>
}

export interface VolumePlan {
  readonly name: string
  /** A tmpfs of the pod's (emptyDir), or files written before the pod starts (secret, configMap). */
  readonly kind: "tmpfs" | "files"
  readonly sizeBytes?: number
  readonly files?: Readonly<Record<string, { readonly content: Buffer; readonly mode: number }>>
}

export interface PodPlan {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  /** The Services whose selector picks this pod: its names on the pods' network. */
  readonly aliases: ReadonlyArray<string>
  readonly restartPolicy: "Always" | "OnFailure" | "Never"
  readonly gracePeriodSeconds: number
  /** The group that owns the pod's emptyDir volumes (securityContext.fsGroup). */
  readonly fsGroup: number | undefined
  readonly volumes: ReadonlyArray<VolumePlan>
  readonly containers: ReadonlyArray<ContainerPlan>
  /** Field path -> why it is not applied here. */
  readonly notHonoured: ReadonlyMap<string, string>
}

const BinarySuffixes: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }
const DecimalSuffixes: Record<string, number> = { k: 1e3, M: 1e6, G: 1e9, T: 1e12 }

/** A Kubernetes quantity of bytes (512Mi, 1G, 64Mi, 1000). */
export const bytesOf = (quantity: string | number): number => {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(quantity))
  if (match === null) throw new Error(`not a quantity of bytes: ${quantity}`)
  const suffix = match[2]
  return Math.round(Number(match[1]) * (suffix === undefined ? 1 : (BinarySuffixes[suffix] ?? DecimalSuffixes[suffix]!)))
}

/** A Kubernetes quantity of CPU (500m, 2, 0.5). */
export const cpusOf = (quantity: string | number): number => {
  const match = /^(\d+(?:\.\d+)?)(m)?$/.exec(String(quantity))
  if (match === null) throw new Error(`not a quantity of CPU: ${quantity}`)
  return Number(match[1]) / (match[2] === "m" ? 1000 : 1)
}

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels[key] === value)

const decoded = (secret: K8sObject): Record<string, Buffer> => ({
  ...Object.fromEntries(Object.entries((secret["data"] ?? {}) as Record<string, string>).map(([key, value]) => [key, Buffer.from(value, "base64")])),
  ...Object.fromEntries(Object.entries((secret["stringData"] ?? {}) as Record<string, string>).map(([key, value]) => [key, Buffer.from(value, "utf8")]))
})

export interface Cluster {
  readonly namespace: string
  readonly objects: ReadonlyArray<K8sObject>
}

const named = (cluster: Cluster, kind: string, name: string): K8sObject | undefined =>
  cluster.objects.find((object) => object.kind === kind && object.metadata.name === name)

const keysOf = (cluster: Cluster, kind: "Secret" | "ConfigMap", name: string, optional: boolean): Record<string, Buffer> | undefined => {
  const object = named(cluster, kind, name)
  if (object === undefined) {
    if (optional) return undefined
    throw new Error(`${kind} ${name} is not among the rendered objects`)
  }
  return kind === "Secret"
    ? decoded(object)
    : Object.fromEntries(Object.entries((object["data"] ?? {}) as Record<string, string>).map(([key, value]) => [key, Buffer.from(value, "utf8")]))
}

const portNumber = (port: string | number, ports: ReadonlyArray<{ name?: string; containerPort: number }>, where: string): number => {
  if (typeof port === "number") return port
  if (/^\d+$/.test(port)) return Number(port)
  const found = ports.find((candidate) => candidate.name === port)
  if (found === undefined) throw new Error(`${where}: no container port named ${port}`)
  return found.containerPort
}

const probeOf = (spec: any, ports: ReadonlyArray<{ name?: string; containerPort: number }>, where: string): Probe | undefined => {
  if (spec === undefined) return undefined
  const common = {
    initialDelaySeconds: spec.initialDelaySeconds ?? 0,
    periodSeconds: spec.periodSeconds ?? 10,
    timeoutSeconds: spec.timeoutSeconds ?? 1,
    failureThreshold: spec.failureThreshold ?? 3,
    successThreshold: spec.successThreshold ?? 1
  }
  if (spec.httpGet !== undefined) {
    return {
      kind: "http",
      port: portNumber(spec.httpGet.port, ports, where),
      path: spec.httpGet.path ?? "/",
      scheme: String(spec.httpGet.scheme ?? "HTTP").toLowerCase() === "https" ? "https" : "http",
      command: [],
      ...common
    }
  }
  if (spec.tcpSocket !== undefined) return { kind: "tcp", port: portNumber(spec.tcpSocket.port, ports, where), path: "", scheme: "http", command: [], ...common }
  if (spec.exec !== undefined) return { kind: "exec", port: 0, path: "", scheme: "http", command: spec.exec.command, ...common }
  throw new Error(`${where}: a probe without httpGet, tcpSocket or exec`)
}

/** The Services that select a pod of these labels, refused when a Service remaps its port (a DNS name cannot). */
export const servicesOf = (cluster: Cluster, labels: Record<string, string>, containerPorts: ReadonlyArray<{ name?: string; containerPort: number }>) =>
  cluster.objects
    .filter((object) => object.kind === "Service" && matches(object["spec"]?.selector, labels))
    .map((service) => {
      const type = service["spec"].type ?? "ClusterIP"
      if (type !== "ClusterIP") throw new Error(`Service ${service.metadata.name}: type ${type} is not run here (ClusterIP only)`)
      for (const port of service["spec"].ports as Array<{ port: number; targetPort?: string | number; name?: string }>) {
        const target = portNumber(port.targetPort ?? port.port, containerPorts, `Service ${service.metadata.name}`)
        if (target !== port.port) throw new Error(`Service ${service.metadata.name} maps port ${port.port} to ${target}: pods reach Services by name, so both must be equal here`)
      }
      return service.metadata.name
    })

/**
 * Plans one pod of a Deployment, Job or Pod template. The downward API answers metadata.name and
 * metadata.namespace; anything else it cannot answer before the pod exists throws.
 */
export const planPod = (cluster: Cluster, podName: string, template: { metadata?: any; spec: any }, where: string): PodPlan => {
  const notHonoured = new Map<string, string>()
  walk(template.metadata ?? {}, podMetadata, `${where}.metadata`, notHonoured)
  walk(template.spec, podSpec, `${where}.spec`, notHonoured)
  const spec = template.spec
  const labels: Record<string, string> = template.metadata?.labels ?? {}
  const podSecurity = spec.securityContext ?? {}
  if (spec.automountServiceAccountToken !== false) notHonoured.set(`${where}.spec.automountServiceAccountToken`, "no API server: no token is mounted")
  if (spec.enableServiceLinks !== false) notHonoured.set(`${where}.spec.enableServiceLinks`, "no Service environment variables are injected")

  const volumes: Array<VolumePlan> = (spec.volumes ?? []).map((volume: any): VolumePlan => {
    if (volume.emptyDir !== undefined) {
      // On tmpfs, so that sizeLimit is a hard bound (the kubelet evicts a pod past it on disk).
      return { name: volume.name, kind: "tmpfs", sizeBytes: volume.emptyDir.sizeLimit === undefined ? 64 * 2 ** 20 : bytesOf(volume.emptyDir.sizeLimit) }
    }
    const source = volume.secret ?? volume.configMap
    const kind = volume.secret !== undefined ? "Secret" : "ConfigMap"
    const keys = keysOf(cluster, kind, source.secretName ?? source.name, source.optional === true) ?? {}
    const mode = source.defaultMode ?? 0o644
    const items: Array<{ key: string; path: string; mode?: number }> = source.items ?? Object.keys(keys).map((key) => ({ key, path: key }))
    const files = Object.fromEntries(
      items.map((item) => {
        const content = keys[item.key]
        if (content === undefined) throw new Error(`${where}: volume ${volume.name} wants key ${item.key}, absent from ${kind} ${source.secretName ?? source.name}`)
        return [item.path, { content, mode: item.mode ?? mode }]
      })
    )
    return { name: volume.name, kind: "files", files }
  })

  const containers = (spec.containers as Array<any>).map((c): ContainerPlan => {
    const at = `${where}.spec.containers[${c.name}]`
    const security = { ...podSecurity, ...(c.securityContext ?? {}) }
    const env: Record<string, string> = {}
    for (const source of c.envFrom ?? []) {
      const ref = source.secretRef ?? source.configMapRef
      const keys = keysOf(cluster, source.secretRef !== undefined ? "Secret" : "ConfigMap", ref.name, ref.optional === true) ?? {}
      for (const [key, value] of Object.entries(keys)) env[`${source.prefix ?? ""}${key}`] = value.toString("utf8")
    }
    for (const variable of c.env ?? []) {
      if (variable.value !== undefined || variable.valueFrom === undefined) {
        // $(VAR) references to earlier variables, as the kubelet expands them.
        env[variable.name] = String(variable.value ?? "").replace(/\$\((\w+)\)/g, (whole, name: string) => env[name] ?? whole)
        continue
      }
      const from = variable.valueFrom
      if (from.fieldRef !== undefined) {
        const field = from.fieldRef.fieldPath
        if (field === "metadata.name") env[variable.name] = podName
        else if (field === "metadata.namespace") env[variable.name] = cluster.namespace
        else throw new Error(`${at}: fieldRef ${field} is not answered here`)
        continue
      }
      const ref = from.secretKeyRef ?? from.configMapKeyRef
      const keys = keysOf(cluster, from.secretKeyRef !== undefined ? "Secret" : "ConfigMap", ref.name, ref.optional === true)
      const value = keys?.[ref.key]
      if (value === undefined) {
        if (ref.optional === true) continue
        throw new Error(`${at}: ${variable.name} wants key ${ref.key} of ${ref.name}, which it does not hold`)
      }
      env[variable.name] = value.toString("utf8")
    }

    const args: Array<string> = []
    if (c.imagePullPolicy === "Always") throw new Error(`${at}: imagePullPolicy Always needs a registry; the rehearsal's image is local`)
    args.push("--pull=never")
    const user = security.runAsUser
    const group = security.runAsGroup
    // The kubelet refuses to start a container that would run as root; without runAsUser the image's
    // USER decides, which the kubelet (runner.ts) checks once the image is known.
    if (security.runAsNonRoot === true && user === 0) throw new Error(`${at}: runAsNonRoot with runAsUser 0`)
    if (user !== undefined) args.push("--user", group !== undefined ? `${user}:${group}` : String(user))
    for (const extra of [podSecurity.fsGroup, ...(podSecurity.supplementalGroups ?? [])].filter((g) => g !== undefined)) args.push("--group-add", String(extra))
    if (security.readOnlyRootFilesystem === true) args.push("--read-only", "--read-only-tmpfs=false")
    if (security.allowPrivilegeEscalation === false) args.push("--security-opt", "no-new-privileges")
    if (security.privileged === true) args.push("--privileged")
    for (const cap of security.capabilities?.drop ?? []) args.push("--cap-drop", cap)
    for (const cap of security.capabilities?.add ?? []) args.push("--cap-add", cap)
    const seccomp = security.seccompProfile?.type
    if (seccomp !== undefined && seccomp !== "RuntimeDefault") throw new Error(`${at}: seccompProfile ${seccomp} is not run here (RuntimeDefault only)`)
    const limits = c.resources?.limits ?? {}
    for (const key of Object.keys(limits)) if (key !== "memory" && key !== "cpu") throw new Error(`${at}: resources.limits.${key} is not applied here`)
    if (limits.memory !== undefined) args.push("--memory", String(bytesOf(limits.memory)))
    if (limits.cpu !== undefined) args.push("--cpus", String(cpusOf(limits.cpu)))
    if (c.workingDir !== undefined) args.push("--workdir", c.workingDir)
    for (const mount of c.volumeMounts ?? []) {
      const volume = volumes.find((v) => v.name === mount.name)
      if (volume === undefined) throw new Error(`${at}: volumeMount of ${mount.name}, which is not a volume of the pod`)
      if (mount.subPath !== undefined) throw new Error(`${at}: subPath mounts are not run here`)
      args.push("--mount", `type=bind,source={volume:${mount.name}},destination=${mount.mountPath}${mount.readOnly === true || volume.kind === "files" ? ",ro=true" : ""}`)
    }
    for (const name of Object.keys(env)) args.push("--env", name)
    if (c.command !== undefined) args.push("--entrypoint", JSON.stringify(c.command))
    args.push(c.image)
    // Kubernetes: a command without args drops the image's CMD, as podman's --entrypoint does.
    if (c.args !== undefined) args.push(...c.args)

    const ports: Array<{ name?: string; containerPort: number; protocol?: string }> = c.ports ?? []
    for (const port of ports) if ((port.protocol ?? "TCP") !== "TCP") throw new Error(`${at}: ${port.protocol} ports are not run here`)
    return {
      name: c.name,
      image: c.image,
      args,
      env,
      probes: {
        ...(c.startupProbe !== undefined ? { startup: probeOf(c.startupProbe, ports, `${at}.startupProbe`)! } : {}),
        ...(c.readinessProbe !== undefined ? { readiness: probeOf(c.readinessProbe, ports, `${at}.readinessProbe`)! } : {}),
        ...(c.livenessProbe !== undefined ? { liveness: probeOf(c.livenessProbe, ports, `${at}.livenessProbe`)! } : {})
      },
      ports: ports.map(({ containerPort, name }) => (name === undefined ? { containerPort } : { name, containerPort }))
    }
  })

  const allPorts = (spec.containers as Array<any>).flatMap((c) => c.ports ?? [])
  return {
    name: podName,
    labels,
    annotations: template.metadata?.annotations ?? {},
    aliases: servicesOf(cluster, labels, allPorts),
    restartPolicy: spec.restartPolicy ?? "Always",
    gracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30,
    fsGroup: podSecurity.fsGroup,
    volumes,
    containers,
    notHonoured
  }
}

/** The workloads of a render, in the order Helm applies them, each with its pods' plans. */
export interface Workload {
  readonly kind: "Job" | "Deployment" | "Pod"
  readonly name: string
  /** pre-install, post-install, test, or none for the release's own objects. */
  readonly hook: "pre-install" | "post-install" | "test" | undefined
  readonly weight: number
  readonly replicas: number
  readonly backoffLimit: number
  readonly activeDeadlineSeconds: number | undefined
  readonly pods: ReadonlyArray<PodPlan>
}

const workloadTables: Record<string, Table> = {
  Deployment: {
    replicas: "honoured",
    selector: "honoured",
    template: "honoured",
    strategy: { notHonoured: "an install starts every replica; no rollout is rehearsed" },
    revisionHistoryLimit: { notHonoured: "no rollout history" },
    minReadySeconds: "honoured",
    progressDeadlineSeconds: { notHonoured: "the rehearsal waits its own deadline for readiness" }
  },
  Job: {
    backoffLimit: "honoured",
    activeDeadlineSeconds: "honoured",
    template: "honoured",
    ttlSecondsAfterFinished: { notHonoured: "the rehearsal removes a finished Job's pod itself" },
    completions: "honoured",
    parallelism: "honoured"
  }
}

const hookOf = (object: K8sObject): Workload["hook"] => {
  const hooks = (object.metadata.annotations?.["helm.sh/hook"] ?? "").split(",").map((h) => h.trim())
  if (hooks.includes("pre-install")) return "pre-install"
  if (hooks.includes("post-install")) return "post-install"
  if (hooks.includes("test")) return "test"
  return undefined
}

/** Every Deployment, Job and Pod of a render, planned; anything the runner cannot run throws before a container starts. */
export const planWorkloads = (cluster: Cluster): { readonly workloads: ReadonlyArray<Workload>; readonly notHonoured: ReadonlyMap<string, string> } => {
  const notHonoured = new Map<string, string>()
  const workloads = cluster.objects
    .filter((object) => ["Deployment", "Job", "Pod", "StatefulSet", "DaemonSet", "CronJob", "ReplicaSet"].includes(object.kind))
    .map((object): Workload => {
      const where = `${object.kind}/${object.metadata.name}`
      if (object.kind !== "Deployment" && object.kind !== "Job" && object.kind !== "Pod") throw new Error(`${where}: a ${object.kind} is not run here`)
      const spec = object["spec"]
      if (object.kind !== "Pod") walk(spec, workloadTables[object.kind]!, `${where}.spec`, notHonoured)
      if (object.kind === "Job" && ((spec.completions ?? 1) !== 1 || (spec.parallelism ?? 1) !== 1)) throw new Error(`${where}: only Jobs of one completion are run here`)
      const template = object.kind === "Pod" ? { metadata: object.metadata, spec } : spec.template
      if (object.kind === "Deployment" && !matches(spec.selector?.matchLabels, template.metadata?.labels ?? {})) {
        throw new Error(`${where}: its selector does not select its own pods`)
      }
      const replicas = object.kind === "Deployment" ? (spec.replicas ?? 1) : 1
      const pods = Array.from({ length: replicas }, (_, index) => {
        const podName = object.kind === "Pod" ? object.metadata.name : `${object.metadata.name}-${index}`
        const plan = planPod(cluster, podName, template, object.kind === "Pod" ? where : `${where}.spec.template`)
        for (const [path, why] of plan.notHonoured) notHonoured.set(path, why)
        return plan
      })
      return {
        kind: object.kind,
        name: object.metadata.name,
        hook: hookOf(object),
        weight: Number(object.metadata.annotations?.["helm.sh/hook-weight"] ?? 0),
        replicas,
        backoffLimit: object.kind === "Job" ? (spec.backoffLimit ?? 6) : 0,
        activeDeadlineSeconds: object.kind === "Job" ? spec.activeDeadlineSeconds : undefined,
        pods
      }
    })
  return { workloads, notHonoured }
}

/** Helm's order for an install: pre-install hooks by weight, the release's objects, post-install hooks by weight; tests on `helm test`. */
export const installOrder = (workloads: ReadonlyArray<Workload>) => {
  const byWeight = (hook: Workload["hook"]) => workloads.filter((w) => w.hook === hook).sort((a, b) => a.weight - b.weight || a.name.localeCompare(b.name))
  return { preInstall: byWeight("pre-install"), release: byWeight(undefined), postInstall: byWeight("post-install"), test: byWeight("test") }
}
