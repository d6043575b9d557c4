-- Read-heavy mix: 9 lookups of keys k0 .. k(2·PREFILL - 1), half of them prefilled, for each
-- insert of a key of this thread's own.
local prefill = tonumber(os.getenv("PREFILL") or "1000000")
-- Names this run's own keys apart from every other run's against the same server.
local run = os.getenv("RUN") or "0"
local headers = { ["Content-Type"] = "application/json" }
local threads = 0
local n = 0

function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

function request()
  n = n + 1
  if n % 10 == 0 then
    return wrk.format("POST", "/insert", headers, string.format('{"key":"r%s-t%d-%d"}', run, id, n))
  end
  local key = math.random(0, 2 * prefill - 1)
  return wrk.format("POST", "/lookup", headers, string.format('{"key":"k%d"}', key))
end
