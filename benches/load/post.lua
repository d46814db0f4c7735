-- wrk script: POSTs the SDK body in $BODY to the sync path of users listed in $USERS (one id a
-- line), round robin, with the API key in $KEY; counts answers that are not 202.
local users = {}
for line in io.lines(os.getenv("USERS")) do users[#users + 1] = line end
local f = assert(io.open(os.getenv("BODY"), "rb"))
local body = f:read("*a")
f:close()
local key = os.getenv("KEY")
local n = 0
local not_accepted = 0

request = function()
  n = n + 1
  local user = users[(n % #users) + 1]
  return wrk.format("POST", "/api/v1/sdk/users/" .. user .. "/sync",
    { ["Content-Type"] = "application/json", ["X-Service-API-Key"] = key }, body)
end

response = function(status, headers, body)
  if status ~= 202 then not_accepted = not_accepted + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("requests: %d, non-2xx/3xx: %d\n", summary.requests,
    summary.errors.status))
  for _, p in ipairs({ 50, 90, 99, 99.9 }) do
    io.write(string.format("p%s: %.2f ms\n", p, latency:percentile(p) / 1000))
  end
end
