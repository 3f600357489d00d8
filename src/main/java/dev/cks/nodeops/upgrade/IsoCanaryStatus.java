package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;

/** The ISO canary of a CloudStackIso NodeUpgrade: the target's ISO checked on the first node before any node is cordoned. */
public class IsoCanaryStatus implements IsoRecord {
    public enum Verdict {
        /** Every check held: the upgrade goes on. */
        Passed,
        /** A check failed, or the check could not run to its end: the NodeUpgrade is refused. */
        Failed
    }

    @JsonPropertyDescription("The node the canary runs on: the first node to be upgraded, or the next where that one was given up before the verdict.")
    private String node;
    @JsonPropertyDescription("The version whose ISO was checked; a Continuous NodeUpgrade given a new target checks that one's ISO.")
    private String targetVersion;
    @JsonPropertyDescription("The node's VM in CloudStack.")
    private String vmId;
    @JsonPropertyDescription("The id of the binaries ISO checked.")
    private String isoId;
    @JsonPropertyDescription("Attaching, Attached, Detaching or Detached: where the canary's ISO is; each change is a CloudStack job the operator polls.")
    private IsoState isoState;
    @JsonPropertyDescription("The CloudStack job attaching or detaching the canary's ISO, polled until it ends.")
    private String isoJobId;
    @JsonPropertyDescription("When the canary's attachIso or detachIso was sent, written before it is sent; set without isoJobId, the request's"
            + " outcome is looked up, not sent again.")
    private String isoRequestedAt;
    @JsonPropertyDescription("The read-only verification Job in the operator's namespace; its log has every check.")
    private String jobName;
    @JsonPropertyDescription("Passed (the upgrade goes on) or Failed (the NodeUpgrade is refused, nothing cordoned); empty until the Job has ended.")
    private Verdict verdict;
    @JsonPropertyDescription("What the canary found in order: kubeadm's version, the image archives, cni, cri-tools, the addon manifests, checksums.")
    private List<String> checked = new ArrayList<>();
    @JsonPropertyDescription("What is wrong with the ISO (empty when it passed).")
    private List<String> problems = new ArrayList<>();
    @JsonPropertyDescription("When the verdict was final: the ISO detached again.")
    private String completedAt;

    public IsoCanaryStatus() {
    }

    IsoCanaryStatus(String node, String targetVersion) {
        this.node = node;
        this.targetVersion = targetVersion;
    }

    /** The verdict is known and the ISO is off the VM again. */
    @JsonIgnore
    boolean isOver() {
        return completedAt != null;
    }

    @Override
    @JsonIgnore
    public String getName() { return node; }

    public String getNode() { return node; }
    public void setNode(String node) { this.node = node; }
    public String getTargetVersion() { return targetVersion; }
    public void setTargetVersion(String targetVersion) { this.targetVersion = targetVersion; }
    @Override
    public String getVmId() { return vmId; }
    @Override
    public void setVmId(String vmId) { this.vmId = vmId; }
    @Override
    public String getIsoId() { return isoId; }
    @Override
    public void setIsoId(String isoId) { this.isoId = isoId; }
    @Override
    public IsoState getIsoState() { return isoState; }
    @Override
    public void setIsoState(IsoState isoState) { this.isoState = isoState; }
    @Override
    public String getIsoJobId() { return isoJobId; }
    @Override
    public void setIsoJobId(String isoJobId) { this.isoJobId = isoJobId; }
    @Override
    public String getIsoRequestedAt() { return isoRequestedAt; }
    @Override
    public void setIsoRequestedAt(String isoRequestedAt) { this.isoRequestedAt = isoRequestedAt; }
    public String getJobName() { return jobName; }
    public void setJobName(String jobName) { this.jobName = jobName; }
    public Verdict getVerdict() { return verdict; }
    public void setVerdict(Verdict verdict) { this.verdict = verdict; }
    public List<String> getChecked() { return checked; }
    public void setChecked(List<String> checked) { this.checked = checked == null ? new ArrayList<>() : checked; }
    public List<String> getProblems() { return problems; }
    public void setProblems(List<String> problems) { this.problems = problems == null ? new ArrayList<>() : problems; }
    public String getCompletedAt() { return completedAt; }
    public void setCompletedAt(String completedAt) { this.completedAt = completedAt; }
}
