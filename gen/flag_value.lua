-- SPDX-License-Identifier: MIT
-- A command-line flag's text as the config value it stands for, so that a flag and the config field of its name
-- go through the same validation: "true" and "false" are booleans, a number is a number, "k=v,k2=v2" is a table
-- (a dotted key "scaling.type=yarn" fills a sub-table), anything else stays a string. And back: a value as the
-- text of its flag, for the stamp's regenerate command.
local errors = require("errors")

local M = {}

local function scalar(s)
  if s == "true" then return true elseif s == "false" then return false end
  -- only decimal text is a number: luajit's tonumber also reads "inf" and "nan", lua5.4's does not
  return s:match("^[-+]?%.?%d") and tonumber(s) or s
end

-- at: where a malformed list is reported (errors.at), field: the config field. Returns the value.
function M.parse(at, field, s)
  if not s:find("=", 1, true) then return scalar(s) end
  local t = {}
  for item in (s .. ","):gmatch("([^,]*),") do
    local key, v = item:match("^%s*([%w_.]+)%s*=%s*(.-)%s*$")
    if not key or v == "" then
      errors.fail(at, field, "must be field=value pairs separated by commas (e.g. %s), got %s",
        field == "rope" and "style=half,theta=10000" or "max_bias=8", errors.show(s))
    end
    local node, path = t, {}
    for part in key:gmatch("[^.]+") do path[#path + 1] = part end
    for i = 1, #path - 1 do
      if node[path[i]] == nil then node[path[i]] = {} end
      if type(node[path[i]]) ~= "table" then errors.fail(at, field, "%s is set twice, got %s", key, errors.show(s)) end
      node = node[path[i]]
    end
    if node[path[#path]] ~= nil then errors.fail(at, field, "%s is set twice, got %s", key, errors.show(s)) end
    node[path[#path]] = scalar(v)
  end
  return t
end

-- A validated value as flag text that M.parse reads back to the same value. fmt_num: a number's exact text;
-- order(prefix): the keys of the (sub-)table at prefix ("" or "scaling.") in a fixed order.
function M.text(v, fmt_num, order)
  if type(v) == "number" then return fmt_num(v) end
  if type(v) ~= "table" then return tostring(v) end
  local items = {}
  local function walk(t, prefix)
    for _, k in ipairs(order(prefix, t)) do
      local x = t[k]
      if type(x) == "table" then walk(x, prefix .. k .. ".")
      elseif x ~= nil then items[#items + 1] = prefix .. k .. "=" .. (type(x) == "number" and fmt_num(x) or tostring(x)) end
    end
  end
  walk(v, "")
  return table.concat(items, ",")
end

return M
