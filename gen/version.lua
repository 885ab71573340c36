-- SPDX-License-Identifier: MIT
-- The generator's version: stamped into every generated file. Bump it when generated output changes.
return "0.2.0"
