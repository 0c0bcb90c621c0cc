import { describe, expect, it } from "@effect/vitest"
import { addressProblem, hostProblem, targetUrlProblem } from "../../src/domain/TargetPolicy.js"

const strict = { allowPrivateTargets: false }
const relaxed = { allowPrivateTargets: true }

// Each URL with the reason its host is refused for; spellings WHATWG URL parsing folds into a
// canonical address are here on purpose, so that a change of parser shows.
const refusedUrls: ReadonlyArray<readonly [string, string]> = [
  ["https://2130706433/", "loopback"],
  ["https://0177.0.0.1/", "loopback"],
  ["https://0x7f000001/", "loopback"],
  ["https://0x7f.1/", "loopback"],
  ["https://127.1/", "loopback"],
  ["https://127.0.0.1/", "loopback"],
  ["https://127.0.0.1./", "loopback"],
  ["https://127.255.255.254:8443/hook", "loopback"],
  ["https://%31%32%37.0.0.1/", "loopback"],
  ["https://\uff10x7f.1/", "loopback"], // full-width digits
  ["https://0.0.0.0/", "unspecified"],
  ["https://0/", "unspecified"],
  ["https://[::1]/", "loopback"],
  ["https://[::1]:8443/hook", "loopback"],
  ["https://[::]/", "unspecified"],
  ["https://[::ffff:127.0.0.1]/", "loopback"],
  ["https://[::ffff:7f00:1]/", "loopback"],
  ["https://[0:0:0:0:0:ffff:7f00:1]/", "loopback"],
  ["https://[::127.0.0.1]/", "loopback"],
  ["https://[::ffff:0:127.0.0.1]/", "loopback"],
  ["https://[64:ff9b::7f00:1]/", "loopback"],
  ["https://[64:ff9b::127.0.0.1]/", "loopback"],
  ["https://[2002:7f00:1::]/", "loopback"],
  ["https://169.254.169.254/latest/meta-data/", "metadata"],
  ["https://[::ffff:169.254.169.254]/", "metadata"],
  ["https://[2002:a9fe:a9fe::1]/", "metadata"],
  ["https://[fd00:ec2::254]/", "metadata"],
  ["https://100.100.100.200/", "metadata"],
  ["https://169.254.170.2/v2/credentials", "metadata"],
  ["https://168.63.129.16/", "metadata"],
  ["https://metadata.google.internal/computeMetadata/v1/", "metadata"],
  ["https://METADATA.GOOGLE.INTERNAL./", "metadata"],
  ["https://metadata/", "metadata"],
  ["https://localhost/", "loopback"],
  ["https://LOCALHOST./", "loopback"],
  ["https://localhost:8443/", "loopback"],
  ["https://foo.localhost/", "loopback"],
  ["https://a.b.LocalHost/", "loopback"],
  ["https://localhost.localdomain/", "loopback"],
  ["https://service.internal/", "private"],
  ["https://printer.local/", "private"],
  ["https://router.home.arpa/", "private"],
  ["https://10.0.0.1/", "private"],
  ["https://10.255.255.255/", "private"],
  ["https://012.1/", "private"], // octal 10.0.0.1
  ["https://172.16.0.1/", "private"],
  ["https://172.31.255.255/", "private"],
  ["https://192.168.1.1/", "private"],
  ["https://[::ffff:10.0.0.1]/", "private"],
  ["https://[64:ff9b::192.168.0.1]/", "private"],
  ["https://[2002:c0a8:101::1]/", "private"],
  ["https://[64:ff9b:1::a00:1]/", "private"],
  ["https://[fec0::1]/", "private"],
  ["https://100.64.0.1/", "CGNAT"],
  ["https://100.127.255.254/", "CGNAT"],
  ["https://169.254.1.1/", "link-local"],
  ["https://[fe80::1]/", "link-local"],
  ["https://[febf:ffff::1]/", "link-local"],
  ["https://[fc00::1]/", "unique-local"],
  ["https://[fd12:3456::1]/", "unique-local"],
  ["https://[ff02::1]/", "multicast"],
  ["https://[ff0e::101]/", "multicast"],
  ["https://224.0.0.1/", "multicast"],
  ["https://239.255.255.250/", "multicast"],
  ["https://255.255.255.255/", "reserved"],
  ["https://240.0.0.1/", "reserved"],
  ["https://198.18.0.1/", "reserved"],
  ["https://198.19.255.255/", "reserved"],
  ["https://192.0.0.8/", "reserved"],
  ["https://192.88.99.1/", "reserved"],
  ["https://[::ffff:0:8.8.8.8]/", "reserved"], // deprecated translated form, even around a public address
  ["https://[::8.8.8.8]/", "reserved"], // deprecated compatible form
  ["https://[2001::1]/", "reserved"], // Teredo
  ["https://[100::1]/", "reserved"],
  ["https://[4000::1]/", "reserved"], // outside 2000::/3
  ["https://192.0.2.1/", "documentation"],
  ["https://198.51.100.7/", "documentation"],
  ["https://203.0.113.9/", "documentation"],
  ["https://[2001:db8::1]/", "documentation"],
  ["https://[3fff::1]/", "documentation"]
]

const acceptedUrls = [
  "https://93.184.215.14/",
  "https://[2606:4700::1111]/",
  "https://example.com/",
  "https://hooks.example.com:8443/in?tenant=acme",
  "https://8.8.8.8/",
  "https://172.32.0.1/", // just past 172.16.0.0/12
  "https://100.128.0.1/", // just past 100.64.0.0/10
  "https://11.0.0.1/",
  "https://192.169.0.1/",
  "https://[::ffff:93.184.215.14]/",
  "https://[64:ff9b::5db8:d70e]/",
  "https://[2002:5db8:d70e::1]/",
  "https://localhost.example.com/",
  "https://internal.example.com/",
  "https://xn--bcher-kva.example/"
]

describe("targetUrlProblem (docs/product-rules.md#webhooks)", () => {
  it(`refuses ${refusedUrls.length} spellings of forbidden hosts, naming the reason`, () => {
    expect(refusedUrls.length).toBeGreaterThanOrEqual(40)
    for (const [url, reason] of refusedUrls) {
      expect(targetUrlProblem(url, strict), url).toMatch(new RegExp(`^the host \\S+ is not allowed: ${reason}$`))
    }
  })

  it("names the canonical host in its answer", () => {
    expect(targetUrlProblem("https://2130706433/", strict)).toBe("the host 127.0.0.1 is not allowed: loopback")
    expect(targetUrlProblem("https://[::ffff:127.0.0.1]/", strict)).toBe("the host ::ffff:7f00:1 is not allowed: loopback")
    expect(targetUrlProblem("https://LOCALHOST./", strict)).toBe("the host localhost. is not allowed: loopback")
  })

  it("accepts public addresses and names", () => {
    for (const url of acceptedUrls) expect(targetUrlProblem(url, strict), url).toBeUndefined()
  })

  it("refuses http unless private targets are allowed, and other schemes always", () => {
    expect(targetUrlProblem("http://example.com/hook", strict)).toBe("the scheme must be https")
    expect(targetUrlProblem("http://example.com/hook", relaxed)).toBeUndefined()
    expect(targetUrlProblem("ftp://example.com/", strict)).toBe("the scheme must be https")
    expect(targetUrlProblem("ftp://example.com/", relaxed)).toBe("the scheme must be https or http")
    expect(targetUrlProblem("file:///etc/passwd", relaxed)).toBe("the scheme must be https or http")
    expect(targetUrlProblem("javascript:alert(1)", strict)).toBe("the scheme must be https")
  })

  it("refuses what is not a URL and URLs carrying credentials", () => {
    for (const url of ["", "example.com/hook", "https://", "https://exa mple.com/", "https://[::1/", "https://999.0.0.1/", "https://1.2.3.4.5/"]) {
      expect(targetUrlProblem(url, strict), url).toBe("not a URL")
    }
    expect(targetUrlProblem("https://user:secret@example.com/", strict)).toBe("credentials in the URL are refused")
    expect(targetUrlProblem("https://user@example.com/", relaxed)).toBe("credentials in the URL are refused")
  })

  it("allows every address and name when private targets are allowed", () => {
    for (const [url] of refusedUrls) expect(targetUrlProblem(url, relaxed), url).toBeUndefined()
    expect(targetUrlProblem("http://127.0.0.1:8080/hook", relaxed)).toBeUndefined()
  })

  it("relies on WHATWG URL parsing to fold IPv4 and IPv6 spellings into one canonical host", () => {
    const hostOf = (url: string) => new URL(url).hostname
    expect(hostOf("http://2130706433/")).toBe("127.0.0.1")
    expect(hostOf("http://0x7f.1/")).toBe("127.0.0.1")
    expect(hostOf("http://0177.0.0.1/")).toBe("127.0.0.1")
    expect(hostOf("http://127.1/")).toBe("127.0.0.1")
    expect(hostOf("http://[::ffff:127.0.0.1]/")).toBe("[::ffff:7f00:1]")
    expect(hostOf("http://[0:0:0:0:0:ffff:7f00:1]/")).toBe("[::ffff:7f00:1]")
    expect(hostOf("http://[64:ff9b::127.0.0.1]/")).toBe("[64:ff9b::7f00:1]")
    expect(hostOf("http://LOCALHOST./")).toBe("localhost.")
  })
})

describe("addressProblem", () => {
  const refusedAddresses: ReadonlyArray<readonly [string, string]> = [
    ["127.0.0.1", "loopback"],
    ["127.53.0.1", "loopback"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["::", "unspecified"],
    ["0.0.0.0", "unspecified"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::FFFF:7F00:1", "loopback"],
    ["64:ff9b::169.254.169.254", "metadata"],
    ["2002:7f00:1::", "loopback"],
    ["fe80::1%eth0", "link-local"],
    ["fe80::1%25", "link-local"],
    ["169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["fd00:ec2::253", "unique-local"],
    ["10.1.2.3", "private"],
    ["100.100.100.200", "metadata"],
    ["100.100.100.201", "CGNAT"],
    ["ff02::1", "multicast"],
    ["192.0.2.1", "documentation"]
  ]

  it("judges IPv4, IPv6 and IPv6 forms embedding an IPv4 address", () => {
    for (const [address, reason] of refusedAddresses) expect(addressProblem(address), address).toBe(reason)
  })

  it("passes public addresses", () => {
    for (const address of ["93.184.215.14", "1.1.1.1", "2606:4700::1111", "2a00:1450:4007:80e::200e", "::ffff:8.8.8.8", "64:ff9b::808:808"]) {
      expect(addressProblem(address), address).toBeUndefined()
    }
  })

  it("fails closed on what is not an address in canonical form", () => {
    for (const text of ["", "example.com", "0177.0.0.1", "127.1", "1.2.3.04", "::g", "[::1"]) {
      expect(addressProblem(text), text).toBe("not an IP address")
    }
    expect(addressProblem("[::1]")).toBe("loopback")
  })

  it("judges names by their spelling only", () => {
    expect(hostProblem("example.com")).toBeUndefined()
    expect(hostProblem("intranet")).toBeUndefined()
    expect(hostProblem("localhost..")).toBe("loopback")
    expect(hostProblem(".")).toBe("empty host")
  })
})
