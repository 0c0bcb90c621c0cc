-- wrk's script for test/bench/load.ts. done() prints the run as one JSON line, read from the exact
-- counters rather than from wrk's rounded report. Given a token file (after `--`), every request
-- carries a compact HS256 JWS signed for it alone: the internal assertion is accepted once, so a
-- fixed header would be refused from the second request on. Signing runs in wrk, through the
-- libcrypto wrk is linked with, so that no other process shares the machine's cores with it.
local ffi = require("ffi")

ffi.cdef [[
typedef struct evp_md_st EVP_MD;
const EVP_MD *EVP_sha256(void);
unsigned char *HMAC(const EVP_MD *md, const void *key, int key_len, const unsigned char *data, size_t data_len, unsigned char *out, unsigned int *out_len);
int EVP_EncodeBlock(unsigned char *out, const unsigned char *data, int data_len);
struct bench_timeval { long tv_sec; long tv_usec; };
struct bench_rusage { struct bench_timeval ru_utime; struct bench_timeval ru_stime; long ru_rest[14]; };
int getrusage(int who, struct bench_rusage *usage);
]]

local base64urlDigits = { ["+"] = "-", ["/"] = "_", ["="] = "" }
local encoded = ffi.new("unsigned char[?]", 4096)

local function base64url(data, length)
  if length > 3000 then error("a JWS part of " .. length .. " bytes exceeds the encoding buffer") end
  local n = ffi.C.EVP_EncodeBlock(encoded, data, length)
  return (ffi.string(encoded, n):gsub("[+/=]", base64urlDigits))
end

-- The token file, one value a line: the header's name, the secret, the JWS's encoded protected
-- header, the claims' JSON up to where iat, exp and jti go, the lifetime in seconds, and a prefix
-- that makes this run's jti differ from every other run's.
function init(args)
  if args[1] == nil then return end
  local file = assert(io.open(args[1], "r"))
  local name, secret, protected, claims, lifetime, jti =
    file:read("*l"), file:read("*l"), file:read("*l"), file:read("*l"), tonumber(file:read("*l")), file:read("*l")
  file:close()
  local sha256 = ffi.C.EVP_sha256()
  local mac = ffi.new("unsigned char[32]")
  local macLength = ffi.new("unsigned int[1]")
  local sent = 0
  request = function()
    sent = sent + 1
    local now = os.time()
    local payload = string.format('%s"iat":%d,"exp":%d,"jti":"%s%d"}', claims, now, now + lifetime, jti, sent)
    local input = protected .. "." .. base64url(payload, #payload)
    ffi.C.HMAC(sha256, secret, #secret, input, #input, mac, macLength)
    wrk.headers[name] = input .. "." .. base64url(mac, macLength[0])
    return wrk.format()
  end
end

function done(summary, latency)
  local usage = ffi.new("struct bench_rusage")
  ffi.C.getrusage(0, usage)
  local cpuUs = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec
  local e = summary.errors
  io.write(string.format(
    '{"durationUs":%d,"requests":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%d,"p99Us":%d,"cpuUs":%d}\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), tonumber(cpuUs)))
end
