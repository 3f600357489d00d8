package dev.cks.nodeops.operation;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.cloudstack.CloudStackCommand;

/**
 * Before the first cordon: may the keys call every command this operation will send? A pure decision over what
 * {@link dev.cks.nodeops.cloudstack.CloudStackClient#permissions} found; the kinds say what they need.
 *
 * <p>Why before the cordon: CloudStack refuses a command the keys' role does not allow (432) only when it is
 * sent, and the writes come after the drains. A project cluster's own keys (CloudStack's "Kubernetes Service
 * User") may scale the cluster but not attach an ISO: without this a NodeUpgrade would learn it with the node
 * drained.
 */
public final class PermissionPreflight {

    /** One command the operation sends, what it does there, and whether the operation can do without it. */
    public record Need(CloudStackCommand command, String purpose, boolean optional) {
        public static Need of(CloudStackCommand command, String purpose) {
            return new Need(command, purpose, false);
        }

        public static Need optional(CloudStackCommand command, String purpose) {
            return new Need(command, purpose, true);
        }
    }

    /** Optional for every operation: without it a write whose answer was lost is judged by CloudStack's state and time. */
    public static final Need LIST_JOBS = Need.optional(CloudStackCommand.LIST_ASYNC_JOBS, "finds the job of a write whose answer was lost");
    public static final Need FOLLOW_JOBS = Need.of(CloudStackCommand.QUERY_ASYNC_JOB_RESULT, "follows each write's job to its end");
    public static final Need FIND_CLUSTER = Need.of(CloudStackCommand.LIST_KUBERNETES_CLUSTERS, "finds the cluster and reads its VM map");

    private PermissionPreflight() {
    }

    /**
     * The refusal, or empty when no needed command is known to be refused. A command whose permission is unknown
     * (absent from {@code mayCall}) is not refused here: its own 432, if any, says it later.
     *
     * @param operation the operation in a sentence's words, e.g. "NodeUpgrade to-135"
     */
    public static Optional<String> refusal(String operation, List<Need> needs, Map<CloudStackCommand, Boolean> mayCall) {
        List<Need> missing = needs.stream().filter(need -> !need.optional())
                .filter(need -> Boolean.FALSE.equals(mayCall.get(need.command()))).toList();
        if (missing.isEmpty()) {
            return Optional.empty();
        }
        List<String> named = missing.stream().map(need -> need.command().apiName() + " (" + need.purpose() + ")").toList();
        return Optional.of("The CloudStack API keys the operator uses may not call " + String.join(", ", named) + ": CloudStack refuses "
                + (missing.size() == 1 ? "it" : "them") + " for these keys' role (432), so " + operation + " cannot be done. Nothing was cordoned. "
                + "A project cluster's own cloudstack-secret holds the keys of CloudStack's \"Kubernetes Service User\", whose role allows "
                + "only what CloudStack itself needs (scaleKubernetesCluster, not ISOs or VM destruction). Give the operator other keys: "
                + "put api-url, api-key and secret-key of a user whose role allows these commands (docs/cloudstack-versions.md lists the "
                + "role) in a Secret of your choosing, point the Helm values cloudstack.secretNamespace and cloudstack.secretName at it, "
                + "then create " + operation + " again.");
    }

    /** The commands to ask about. */
    public static List<CloudStackCommand> commands(List<Need> needs) {
        return needs.stream().map(Need::command).distinct().toList();
    }
}
