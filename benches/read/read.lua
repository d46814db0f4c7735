-- wrk script for the read benchmark: each request reads a random user (6 to $USERS, the users
-- with ordinary histories) over a random window of the generated year, with the API key in $KEY.
-- $MODE: `timeseries` (a 100-point heart-rate page), `activity` or `sleep` (30-day summaries).
local key = os.getenv("KEY")
local mode = os.getenv("MODE") or "timeseries"
local users = tonumber(os.getenv("USERS") or "10000")
local year0 = os.time({ year = 2025, month = 11, day = 1, hour = 0 })

local function user(n)
  return string.format("00000000-0000-4000-8000-%012x", n)
end

local function day(offset)
  return os.date("!%Y-%m-%d", year0 + offset * 86400)
end

setup = function(thread) thread:set("id", tostring(thread)) end

init = function() math.randomseed(os.time() + tonumber(string.sub(tostring({}), 8), 16)) end

request = function()
  local u = user(math.random(6, users))
  local d = math.random(0, 330)
  local path
  if mode == "timeseries" then
    -- Heart rate every 2 hours: 30 days hold 360 samples, so every page is a full 100.
    path = "/api/v1/users/" .. u .. "/timeseries?types=heart_rate&limit=100&start_time=" ..
      day(d) .. "T00:00:00Z&end_time=" .. day(d + 30) .. "T00:00:00Z"
  else
    path = "/api/v1/users/" .. u .. "/summaries/" .. mode .. "?limit=100&start_date=" ..
      day(d) .. "&end_date=" .. day(d + 29)
  end
  return wrk.format("GET", path, { ["X-Service-API-Key"] = key })
end

local bad = 0
response = function(status) if status ~= 200 then bad = bad + 1 end end

done = function(summary, latency, requests)
  io.write(string.format("requests: %d (%.0f/s), non-2xx/3xx: %d\n", summary.requests,
    summary.requests / (summary.duration / 1e6), summary.errors.status))
  for _, p in ipairs({ 50, 90, 99, 99.9 }) do
    io.write(string.format("p%s: %.2f ms\n", p, latency:percentile(p) / 1000))
  end
end
