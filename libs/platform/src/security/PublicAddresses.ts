import type { LookupAddress } from "node:dns"
import { isIP, type LookupFunction } from "node:net"

/**
 * Whether an address or a host name is a public place on the Internet, for the platform's
 * outbound clients that go where their users say (webhook receivers, identity providers): never an
 * address of this machine, of a private network or of a cloud's metadata service
 * (docs/security.md, "Outbound addresses"). A name is judged by its spelling here; its addresses
 * are judged again at connection time (`guardedLookup`), so that a name re-pointed at a private
 * address after it was accepted (DNS rebinding) is refused too.
 */

// --- IPv4 -------------------------------------------------------------------------------------

const ipv4ToInt = (text: string): number | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined
    const octet = Number(part)
    if (octet > 255) return undefined
    value = value * 256 + octet
  }
  return value
}

const ipv4Range = (base: string, bits: number, reason: string) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0
  return { network: (ipv4ToInt(base)! & mask) >>> 0, mask, reason }
}

// The IANA special-purpose registry (RFC 6890 and successors); the metadata endpoints come first
// so that their reason wins over the wider range they sit in.
const ipv4Ranges = [
  ipv4Range("169.254.169.254", 32, "metadata"), // AWS, GCP, Azure, OpenStack, DigitalOcean
  ipv4Range("169.254.170.2", 32, "metadata"), // AWS ECS task credentials
  ipv4Range("100.100.100.200", 32, "metadata"), // Alibaba Cloud
  ipv4Range("192.0.0.192", 32, "metadata"), // Oracle Cloud
  ipv4Range("168.63.129.16", 32, "metadata"), // Azure WireServer: a public address only VMs reach
  ipv4Range("0.0.0.0", 8, "unspecified"),
  ipv4Range("10.0.0.0", 8, "private"),
  ipv4Range("100.64.0.0", 10, "CGNAT"),
  ipv4Range("127.0.0.0", 8, "loopback"),
  ipv4Range("169.254.0.0", 16, "link-local"),
  ipv4Range("172.16.0.0", 12, "private"),
  ipv4Range("192.0.0.0", 24, "reserved"),
  ipv4Range("192.0.2.0", 24, "documentation"),
  ipv4Range("192.88.99.0", 24, "reserved"), // the deprecated 6to4 relay anycast
  ipv4Range("192.168.0.0", 16, "private"),
  ipv4Range("198.18.0.0", 15, "reserved"), // benchmarking
  ipv4Range("198.51.100.0", 24, "documentation"),
  ipv4Range("203.0.113.0", 24, "documentation"),
  ipv4Range("224.0.0.0", 4, "multicast"),
  ipv4Range("240.0.0.0", 4, "reserved") // 255.255.255.255 included
]

const ipv4Problem = (value: number): string | undefined => {
  for (const range of ipv4Ranges) {
    if (((value & range.mask) >>> 0) === range.network) return range.reason
  }
  return undefined
}

// --- IPv6 -------------------------------------------------------------------------------------

/** Eight 16-bit words; the input has passed `isIP(...) === 6`, so the grammar is trusted. */
const parseIpv6 = (text: string): ReadonlyArray<number> | undefined => {
  const zone = text.indexOf("%")
  let head = zone === -1 ? text : text.slice(0, zone)
  const tail: Array<number> = []
  if (head.includes(".")) {
    const lastColon = head.lastIndexOf(":")
    const ipv4 = ipv4ToInt(head.slice(lastColon + 1))
    if (ipv4 === undefined) return undefined
    tail.push(ipv4 >>> 16, ipv4 & 0xffff)
    head = head.slice(0, lastColon + 1)
    if (!head.endsWith("::")) head = head.slice(0, -1)
  }
  const halves = head.split("::")
  if (halves.length > 2) return undefined
  const words = (half: string | undefined) => (half ? half.split(":").map((word) => parseInt(word, 16)) : [])
  const left = words(halves[0])
  const right = words(halves[1])
  const missing = 8 - tail.length - left.length - right.length
  if (halves.length === 1 ? missing !== 0 : missing < 0) return undefined
  const all = [...left, ...new Array<number>(missing).fill(0), ...right, ...tail]
  return all.some((word) => Number.isNaN(word) || word < 0 || word > 0xffff) ? undefined : all
}

const ipv6Prefix = (text: string, bits: number) => ({ words: parseIpv6(text)!, bits })

const inPrefix = (address: ReadonlyArray<number>, prefix: { readonly words: ReadonlyArray<number>; readonly bits: number }) => {
  for (let index = 0, left = prefix.bits; left > 0; index++, left -= 16) {
    const mask = left >= 16 ? 0xffff : (0xffff << (16 - left)) & 0xffff
    if (((address[index] ?? 0) & mask) !== ((prefix.words[index] ?? 0) & mask)) return false
  }
  return true
}

const ipv4At = (address: ReadonlyArray<number>, index: number) => (((address[index] ?? 0) << 16) >>> 0) + (address[index + 1] ?? 0)

// Forms that carry an IPv4 address a packet may end up at: judged by that address.
const embeddingPrefixes: ReadonlyArray<{ readonly prefix: ReturnType<typeof ipv6Prefix>; readonly at: number; readonly publicReason?: string }> = [
  { prefix: ipv6Prefix("::ffff:0:0", 96), at: 6 }, // IPv4-mapped
  { prefix: ipv6Prefix("64:ff9b::", 96), at: 6 }, // NAT64 well-known prefix
  { prefix: ipv6Prefix("2002::", 16), at: 1 }, // 6to4
  // Deprecated forms no public host uses: refused even around a public IPv4.
  { prefix: ipv6Prefix("::", 96), at: 6, publicReason: "reserved" }, // IPv4-compatible
  { prefix: ipv6Prefix("::ffff:0:0:0", 96), at: 6, publicReason: "reserved" } // SIIT IPv4-translated
]

const ipv6Ranges = [
  { prefix: ipv6Prefix("fd00:ec2::254", 128), reason: "metadata" }, // AWS IMDS over IPv6
  { prefix: ipv6Prefix("64:ff9b:1::", 48), reason: "private" }, // local-use NAT64 (RFC 8215)
  { prefix: ipv6Prefix("100::", 64), reason: "reserved" }, // discard-only
  { prefix: ipv6Prefix("2001::", 23), reason: "reserved" }, // IETF assignments, Teredo included
  { prefix: ipv6Prefix("2001:db8::", 32), reason: "documentation" },
  { prefix: ipv6Prefix("3fff::", 20), reason: "documentation" },
  { prefix: ipv6Prefix("fc00::", 7), reason: "unique-local" },
  { prefix: ipv6Prefix("fe80::", 10), reason: "link-local" },
  { prefix: ipv6Prefix("fec0::", 10), reason: "private" }, // deprecated site-local
  { prefix: ipv6Prefix("ff00::", 8), reason: "multicast" }
]
const globalUnicast = ipv6Prefix("2000::", 3)

const ipv6Problem = (address: ReadonlyArray<number>): string | undefined => {
  const zeroes = address.slice(0, 7).every((word) => word === 0)
  if (zeroes && address[7] === 0) return "unspecified"
  if (zeroes && address[7] === 1) return "loopback"
  for (const { at, prefix, publicReason } of embeddingPrefixes) {
    if (inPrefix(address, prefix)) return ipv4Problem(ipv4At(address, at)) ?? publicReason
  }
  for (const { prefix, reason } of ipv6Ranges) {
    if (inPrefix(address, prefix)) return reason
  }
  // Everything outside 2000::/3 is unassigned or special: not a place a webhook lives.
  return inPrefix(address, globalUnicast) ? undefined : "reserved"
}

// --- addresses and names ----------------------------------------------------------------------

/** `undefined` when `ip` is a public address; otherwise a short reason ("loopback", "private"...). */
export const addressProblem = (ip: string): string | undefined => {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip
  switch (isIP(bare)) {
    case 4:
      return ipv4Problem(ipv4ToInt(bare)!)
    case 6: {
      const words = parseIpv6(bare)
      return words === undefined ? "not an IP address" : ipv6Problem(words)
    }
    default:
      // Fail closed: whatever this is, nothing proved it public.
      return "not an IP address"
  }
}

const metadataNames = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal"
])
// Suffixes that name only local or private-use places (RFC 6761, RFC 6762, RFC 8375, ICANN's
// `.internal`): no public receiver can live there.
const loopbackSuffixes = ["localhost", "localhost.localdomain"]
const privateSuffixes = ["internal", "local", "home.arpa", "localdomain"]

const hasSuffix = (name: string, suffix: string) => name === suffix || name.endsWith(`.${suffix}`)

/**
 * The problem with a URL host as WHATWG URL parsing leaves it (lower case, IPv4 canonical, IPv6
 * bracketed and compressed), or `undefined`. A name is judged by its spelling only; its addresses
 * are judged at connection time.
 */
export const hostProblem = (hostname: string): string | undefined => {
  const host = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname
  if (isIP(host) !== 0) return addressProblem(host)
  const name = host.toLowerCase().replace(/\.+$/, "")
  if (name === "") return "empty host"
  if (loopbackSuffixes.some((suffix) => hasSuffix(name, suffix))) return "loopback"
  if (metadataNames.has(name)) return "metadata"
  if (privateSuffixes.some((suffix) => hasSuffix(name, suffix))) return "private"
  return undefined
}


/**
 * A `lookup` for `net.connect`: the addresses a socket will connect to are judged here, at
 * connection time, so that a name re-pointed at a private address after it was accepted (DNS
 * rebinding) is refused too. Refused if ANY answer is forbidden: node may try them all (happy
 * eyeballs). `allowed` lets some reasons through (loopback, for a provider run on this machine
 * where the settings allow it). Answers in the shape node asked for.
 */
export const guardedLookup = (
  resolve: LookupFunction,
  refuse: (hostname: string, address: string, reason: string) => Error,
  allowed: (reason: string) => boolean = () => false
): LookupFunction =>
(hostname, options, callback) => {
  resolve(hostname, { ...options, all: true }, (error, answer, family) => {
    if (error) return callback(error, "", 0)
    const addresses: ReadonlyArray<LookupAddress> = typeof answer === "string" ? [{ address: answer, family: family ?? 0 }] : answer
    for (const { address } of addresses) {
      const reason = addressProblem(address)
      if (reason !== undefined && !allowed(reason)) return callback(refuse(hostname, address, reason), "", 0)
    }
    const first = addresses[0]
    if (options.all === true) return callback(null, [...addresses])
    if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "", 0)
    callback(null, first.address, first.family)
  })
}
