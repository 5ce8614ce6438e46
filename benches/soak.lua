-- Mixed reads and writes for benches/soak.sh: task reads by id, the board, a
-- search, note reads, task creates, edits, claims and releases. Every answer's
-- status is counted; done() prints them one per line as `status <code> <n>`.
local ids, notes, threads = {}, {}, {}
-- Global, so done() can read each thread's table with thread:get.
counts = {}

local function lines(path)
  local out = {}
  for line in io.lines(path) do out[#out + 1] = line end
  return out
end

function setup(thread) table.insert(threads, thread) end

function init(args)
  ids = lines(args[1])
  notes = lines(args[2])
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)"), 16) % 100000)
end

local json = { ["Content-Type"] = "application/json" }
local words = { "migration", "deploy", "review", "search", "index", "claim" }
local priorities = { "low", "normal", "high", "urgent" }

function request()
  local r = math.random(100)
  local id = ids[math.random(#ids)]
  if r <= 50 then
    return wrk.format("GET", "/api/v1/tasks/" .. id)
  elseif r <= 58 then
    return wrk.format("GET", "/api/v1/board?limit=20")
  elseif r <= 66 then
    return wrk.format("GET", "/api/v1/search?q=" .. words[math.random(#words)])
  elseif r <= 74 then
    return wrk.format("GET", "/api/v1/notes/" .. notes[math.random(#notes)])
  elseif r <= 84 then
    return wrk.format("POST", "/api/v1/tasks", json,
      '{"title":"Soak task","description":"Written under load.","tags":["soak"]}')
  elseif r <= 92 then
    return wrk.format("PATCH", "/api/v1/tasks/" .. id, json,
      '{"priority":"' .. priorities[math.random(#priorities)] .. '"}')
  elseif r <= 96 then
    return wrk.format("POST", "/api/v1/tasks/" .. id .. "/claim", json,
      '{"agent":"soak-' .. math.random(4) .. '","ttl_minutes":1}')
  else
    return wrk.format("POST", "/api/v1/tasks/" .. id .. "/release", json,
      '{"agent":"soak-' .. math.random(4) .. '"}')
  end
end

function response(status)
  counts[status] = (counts[status] or 0) + 1
end

function done()
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("counts")) do
      total[status] = (total[status] or 0) + n
    end
  end
  for status, n in pairs(total) do io.write(string.format("status %d %d\n", status, n)) end
end
