-- SPDX-License-Identifier: MIT
-- Vector registers each microkernel holds at once (accumulators, plus the vectors one step loads): a tuned
-- blocking (the vocabulary's defaults overlaid by the config's `tuned` knobs, gen/plan.lua's plan.blocking) must fit
-- the ISA vocabulary's `registers`; an ISA without one has no register budget. `knobs` are the knobs of the
-- formula, in the order a message names them; `formula` is `count` as a message prints it.
local M = {}

M.budgets = {
  { phase = "prefill", what = "Q·Kᵀ", knobs = { "rv", "kb" }, formula = "rv*kb + rv",
    count = function(t) return t.rv * t.kb + t.rv end },
  { phase = "prefill", what = "P·V", knobs = { "pr", "pvv" }, formula = "pr*pvv + pvv",
    count = function(t) return t.pr * t.pvv + t.pvv end },
  -- decode's Q·Kᵀ holds the smaller side of its block (rb vectors of Q or kb of K) while the other streams by
  { phase = "decode", what = "Q·Kᵀ", knobs = { "rb", "kb" }, formula = "rb*kb + min(rb, kb)",
    count = function(t) return t.rb * t.kb + math.min(t.rb, t.kb) end },
  { phase = "decode", what = "P·V", knobs = { "pr", "pvv" }, formula = "pr*pvv + pvv",
    count = function(t) return t.pr * t.pvv + t.pvv end },
}

-- The first budget of `phase` that blocking `b` exceeds on vocabulary `vocab`, and the registers it needs;
-- nil when every block fits (or the ISA has no register budget).
function M.exceeded(vocab, phase, b)
  if not vocab.registers then return nil end
  for _, budget in ipairs(M.budgets) do
    if budget.phase == phase then
      local need = budget.count(b)
      if need > vocab.registers then return budget, need end
    end
  end
  return nil
end

return M
