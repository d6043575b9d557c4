-- Batched lookups: each request asks about BATCH (100) keys of k0 .. k(2·PREFILL - 1), half of
-- them prefilled.
local prefill = tonumber(os.getenv("PREFILL") or "1000000")
local batch = tonumber(os.getenv("BATCH") or "100")
local headers = { ["Content-Type"] = "application/json" }

function request()
  local keys = {}
  for i = 1, batch do
    keys[i] = string.format('"k%d"', math.random(0, 2 * prefill - 1))
  end
  local body = '{"keys":[' .. table.concat(keys, ",") .. ']}'
  return wrk.format("POST", "/lookup-batch", headers, body)
end
