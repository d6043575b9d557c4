-- Write-heavy mix, per 10 requests: 5 inserts of keys of this thread's own, 4 removes of keys
-- it inserted at least LAG inserts earlier (an insert while there are none yet), 1 lookup.
local prefill = tonumber(os.getenv("PREFILL") or "1000000")
-- Names this run's own keys apart from every other run's against the same server.
local run = os.getenv("RUN") or "0"
local lag = 10000
local headers = { ["Content-Type"] = "application/json" }
local threads = 0
local n, inserted, removed = 0, 0, 0

function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

local function insert()
  inserted = inserted + 1
  return wrk.format("POST", "/insert", headers, string.format('{"key":"r%s-t%d-%d"}', run, id, inserted))
end

function request()
  n = n + 1
  local slot = n % 10
  if slot == 0 then
    local key = math.random(0, 2 * prefill - 1)
    return wrk.format("POST", "/lookup", headers, string.format('{"key":"k%d"}', key))
  elseif slot % 2 == 1 or removed + lag >= inserted then
    return insert()
  end
  removed = removed + 1
  return wrk.format("POST", "/remove", headers, string.format('{"key":"r%s-t%d-%d"}', run, id, removed))
end
