-- Argo CD health of the operator's kinds (NodeUpgrade, ScaleDown, VMMapAudit, DrainReport), read from their status only.
-- One script for the four: Argo CD hands it the object as `obj` and takes the table it returns.
-- docs/gitops.md shows where it goes; ArgoCdHealthTest runs it on statuses the operator writes.
local hs = { status = "Progressing", message = "Waiting for the operator to pick it up" }
if obj.status == nil or obj.status.phase == nil then
  return hs
end
local status = obj.status
-- A status written for an older spec says nothing yet about the current one.
if status.observedGeneration ~= nil and obj.metadata.generation ~= nil and status.observedGeneration < obj.metadata.generation then
  hs.message = "Waiting for the operator to act on generation " .. obj.metadata.generation
  return hs
end
local function isTrue(conditionType)
  if status.conditions == nil then
    return false
  end
  for _, condition in ipairs(status.conditions) do
    if condition.type == conditionType and condition.status == "True" then
      return true
    end
  end
  return false
end
local phase = status.phase
hs.message = status.message or phase
-- The kinds that run again and again: which of their phases are Healthy and which Degraded. Skipped: an audit
-- compared nothing on purpose (the cluster is not Running, or not managed by CloudStack); Blocked: nodes a report
-- names are what it reports, not a fault of the report.
local standing = {
  VMMapAudit = { healthy = { InSync = true, Skipped = true }, degraded = { DriftFound = true, Error = true } },
  DrainReport = { healthy = { Drainable = true, Blocked = true }, degraded = { Error = true } },
}
local kind = standing[obj.kind]
if kind ~= nil then
  if kind.healthy[phase] then
    hs.status = "Healthy"
  elseif kind.degraded[phase] then
    hs.status = "Degraded"
  elseif phase == "Suspended" then
    hs.status = "Suspended"
  end
  return hs
end
-- NodeUpgrade and ScaleDown: an operation that ends.
if phase == "Succeeded" then
  hs.status = "Healthy"
elseif phase == "Failed" or phase == "RolledBack" then
  hs.status = "Degraded"
elseif isTrue("Paused") then
  -- Stopped at a safe boundary by spec.paused, until it is set back to false.
  hs.status = "Suspended"
end
return hs
