package dev.cks.nodeops.upgrade;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.cloudstack.CloudStackId;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

@ValidationRule(value = "self.type != 'Script' || has(self.script)", message = "executor.type Script needs executor.script.configMapRef")
// What runs as root on every node is the operator's configuration, never the choice of whoever may create a NodeUpgrade.
@ValidationRule(value = "!has(self.image) || self.image == ''", message = "executor.image is not accepted: the upgrade Job's image is the "
        + "operator's configuration (Helm value upgrade.jobImage, pinned by digest); remove executor.image")
@ValidationRule(value = "!has(self.cloudStackIso) || self.type == 'CloudStackIso'", message = "executor.cloudStackIso applies only with type CloudStackIso")
@ValidationRule(value = "!has(self.script) || self.type == 'Script'", message = "executor.script applies only with type Script")
public class UpgradeExecutor {

    public enum Type {
        /** The CKS way: attach the version's binaries ISO to the VM and run CKS's node script. */
        CloudStackIso,
        /** A user-supplied script from a ConfigMap, for any kubeadm cluster. */
        Script
    }

    @JsonPropertyDescription("CloudStackIso (attach the version's ISO, run CKS's node script) or Script (your script from a ConfigMap).")
    @Required
    private Type type;

    @JsonPropertyDescription("Settings of the CloudStackIso executor; only with type CloudStackIso.")
    private CloudStackIso cloudStackIso;

    @JsonPropertyDescription("Settings of the Script executor; required with type Script.")
    private Script script;

    /**
     * Kept in the schema only so that admission refuses it with a sentence (an unknown field would be
     * pruned silently, and the author would believe their image runs): the image is always the operator's.
     */
    @JsonPropertyDescription("Not accepted (admission refuses any value): the upgrade Job's image is the operator's configuration, Helm value upgrade.jobImage.")
    private String image;

    @JsonPropertyDescription("Seconds the upgrade Job of one node may run.")
    @Default("1800")
    @Min(1)
    @Max(86400)
    private Integer jobTimeoutSeconds = 1800;

    @ValidationRule(value = "!has(self.kubernetesVersionId) || self.kubernetesVersionId == '' || self.kubernetesVersionId.matches('" + CloudStackId.PATTERN + "')",
            message = "kubernetesVersionId must be a CloudStack id (a UUID), as listKubernetesSupportedVersions shows it")
    public static class CloudStackIso {
        @JsonPropertyDescription("Id of CloudStack's Kubernetes supported version whose ISO is attached; empty looks it up by targetVersion.")
        @Size(max = 36)
        private String kubernetesVersionId;
        @JsonPropertyDescription("Whether the node script applies the ISO's addon manifests (network.yaml, then headlamp.yaml or else"
                + " dashboard.yaml) after kubeadm upgrade apply on the first control-plane node, as CloudStack's own upgrade does (default true)."
                + " Set false for a cluster whose CNI or dashboard is not the ISO's, e.g. one created with a CNI configuration of its own.")
        private Boolean applyAddons;

        public String getKubernetesVersionId() { return kubernetesVersionId; }
        public void setKubernetesVersionId(String kubernetesVersionId) { this.kubernetesVersionId = kubernetesVersionId; }
        public Boolean getApplyAddons() { return applyAddons; }
        public void setApplyAddons(Boolean applyAddons) { this.applyAddons = applyAddons; }

        /** Unset means true: what CloudStack's upgrade does. */
        public boolean appliesAddons() {
            return !Boolean.FALSE.equals(applyAddons);
        }
    }

    public static class Script {
        // The ConfigMap lives in the operator's namespace, where the Jobs run: the operator needs no
        // read access to ConfigMaps anywhere else.
        @JsonPropertyDescription("The ConfigMap (in the operator's namespace) holding the script; it is called as `<script> <targetVersion> apply|node`.")
        @Required
        private ConfigMapKeyRef configMapRef;

        public ConfigMapKeyRef getConfigMapRef() { return configMapRef; }
        public void setConfigMapRef(ConfigMapKeyRef configMapRef) { this.configMapRef = configMapRef; }
    }

    @ValidationRule(value = "self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",
            message = "configMapRef.name must be a ConfigMap name: lowercase letters, digits, '-' and '.'")
    @ValidationRule(value = "self.key.matches('^[-._a-zA-Z0-9]+$') && self.key != '.' && self.key != '..'",
            message = "configMapRef.key must be a ConfigMap key: letters, digits, '-', '_' and '.'")
    public static class ConfigMapKeyRef {
        @JsonPropertyDescription("The ConfigMap's name, e.g. the chart's <fullname>-upgrade-scripts.")
        @Required
        @Size(max = 253)
        private String name;
        @JsonPropertyDescription("The ConfigMap key that holds the script; it runs only if its sha256 is among those of the chart's upgrade.scripts.")
        @Required
        @Size(max = 253)
        private String key;

        public String getName() { return name; }
        public void setName(String name) { this.name = name; }
        public String getKey() { return key; }
        public void setKey(String key) { this.key = key; }
    }

    public Type getType() { return type; }
    public void setType(Type type) { this.type = type; }
    public CloudStackIso getCloudStackIso() { return cloudStackIso; }
    public void setCloudStackIso(CloudStackIso cloudStackIso) { this.cloudStackIso = cloudStackIso; }
    public Script getScript() { return script; }
    public void setScript(Script script) { this.script = script; }
    public String getImage() { return image; }
    public void setImage(String image) { this.image = image; }
    public Integer getJobTimeoutSeconds() { return jobTimeoutSeconds; }
    public void setJobTimeoutSeconds(Integer jobTimeoutSeconds) { this.jobTimeoutSeconds = jobTimeoutSeconds; }
}
