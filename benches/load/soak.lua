-- wrk script for the soak: POSTs one of the SDK bodies $BODIES/body_<k>.json (k = 1..$BODY_COUNT,
-- each a different day of data) to the sync path of the users in $USERS, round robin, with the
-- API key in $KEY; each connection waits $DELAY_MS between requests, so the rate is steady.
local users = {}
for line in io.lines(os.getenv("USERS")) do users[#users + 1] = line end
local bodies = {}
for k = 1, tonumber(os.getenv("BODY_COUNT")) do
  local f = assert(io.open(os.getenv("BODIES") .. "/body_" .. k .. ".json", "rb"))
  bodies[k] = f:read("*a")
  f:close()
end
local key = os.getenv("KEY")
local pause = tonumber(os.getenv("DELAY_MS"))
local n = 0
local threads = 0

-- Each thread starts at its own place in the sequence, so the two send different data.
setup = function(thread)
  threads = threads + 1
  thread:set("offset", threads - 1)
end

init = function(args)
  -- Half the bodies apart.
  n = (tonumber(offset) or 0) * #users * math.floor(#bodies / 2)
end

request = function()
  n = n + 1
  local user = users[(n % #users) + 1]
  local body = bodies[(math.floor(n / #users) % #bodies) + 1]
  return wrk.format("POST", "/api/v1/sdk/users/" .. user .. "/sync",
    { ["Content-Type"] = "application/json", ["X-Service-API-Key"] = key }, body)
end

delay = function()
  return pause
end

done = function(summary, latency, requests)
  io.write(string.format("requests: %d, non-2xx/3xx: %d, socket errors: %d\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout))
  for _, p in ipairs({ 50, 99, 99.9 }) do
    io.write(string.format("p%s: %.2f ms\n", p, latency:percentile(p) / 1000))
  end
end
