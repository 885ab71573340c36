-- SPDX-License-Identifier: MIT
-- User mistakes: a bad config, flag or spec entry raises a UserError whose message names the file (or flag), the
-- field and the reason; the CLI prints it on one line, exits 2 and writes nothing. Any other error is a bug in
-- attngen itself. Every module raises through here, so none needs another step of the pipeline for its errors.
local M = {}

local UserError = {}
UserError.__index = UserError
UserError.__tostring = function(e) return e.msg end
M.UserError = UserError

-- True for an error value raised by M.raise or M.fail.
function M.is(e) return getmetatable(e) == UserError end

-- Raises a UserError with an already complete message ("spec: isa 'x' has no vocabulary ...").
function M.raise(fmt, ...)
  error(setmetatable({ msg = string.format(fmt, ...) }, UserError), 0)
end

-- One-line, printable rendering of any value for messages (control characters escaped, long text cut).
function M.show(v)
  if type(v) == "number" then
    if v ~= v then return "nan" elseif v == math.huge then return "inf" elseif v == -math.huge then return "-inf" end
    if v == math.floor(v) and math.abs(v) < 2^53 then return string.format("%d", v) end
    return string.format("%.9g", v)
  end
  if type(v) == "table" then return "a table" end
  if type(v) ~= "string" then return tostring(v) end
  local s = v:gsub("[%c\"\\]", function(c)
    if c == "\n" then return "\\n" elseif c == "\t" then return "\\t" elseif c == "\"" or c == "\\" then return "\\" .. c end
    return string.format("\\%03d", c:byte())
  end)
  if #s > 80 then s = s:sub(1, 77) .. "..." end
  return "\"" .. s .. "\""
end

-- where: the file name (or "command line"), or M.at's place of a field a flag set; field: nil, a field name
-- ("rope.theta") or "flag '--x' (field 'y')".
function M.fail(where, field, fmt, ...)
  local msg = string.format(fmt, ...)
  if type(where) == "table" then
    msg, where = string.format("flag '%s' (field '%s'): %s", where.flag, field, msg), "command line"
  elseif field and field:find("^flag ") then msg = field .. ": " .. msg
  elseif field then msg = string.format("field '%s': %s", field, msg) end
  M.raise("%s", where .. ": " .. msg)
end

-- Where a field's value came from, for M.fail: the flag that set it (origin maps a field to its flag), else the
-- file, so a message about the field or any of its sub-fields names what the user actually typed.
function M.at(where, origin, field)
  if origin and origin[field] then return { flag = origin[field] } end
  return where
end

return M
