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
if obj.kind == "VMMapAudit" then
  -- Skipped: nothing compared on purpose (the cluster is not Running, or not managed by CloudStack).
  if phase == "InSync" or phase == "Skipped" then
    hs.status = "Healthy"
  elseif phase == "DriftFound" or phase == "Error" then
    hs.status = "Degraded"
  elseif phase == "Suspended" then
    hs.status = "Suspended"
  end
  return hs
end
if obj.kind == "DrainReport" then
  -- Blocked nodes are what it reports, not a fault of the report: it is Healthy while its passes run.
  if phase == "Drainable" or phase == "Blocked" then
    hs.status = "Healthy"
  elseif phase == "Error" then
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
