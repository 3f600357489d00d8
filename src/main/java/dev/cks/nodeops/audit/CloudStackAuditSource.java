package dev.cks.nodeops.audit;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.cks.nodeops.audit.ClusterView.MappedVm;
import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackAccess.ClusterResolution;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.CloudStackTimestamps;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.OwnerScope;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.cloudstack.VmQuery;
import io.fabric8.kubernetes.client.KubernetesClientException;

/** The audit's questions, answered by the CloudStack client: a thin translation, no decisions. */
@ApplicationScoped
public class CloudStackAuditSource implements AuditSource {
    private final BiFunction<String, Collection<String>, ClusterResolution> resolver;
    private final Supplier<CloudStackClient> client;

    @Inject
    public CloudStackAuditSource(CloudStackAccess access) {
        this(access::resolveCluster, access::client);
    }

    CloudStackAuditSource(BiFunction<String, Collection<String>, ClusterResolution> resolver, Supplier<CloudStackClient> client) {
        this.resolver = resolver;
        this.client = client;
    }

    @Override
    public ClusterLookup cluster(String clusterId, Collection<String> nodeNames) {
        ClusterResolution resolution = answer(() -> resolver.apply(clusterId, nodeNames));
        return resolution.cluster().map(CloudStackAuditSource::view).map(ClusterLookup::found)
                .orElseGet(() -> ClusterLookup.refused(sentence(resolution.refusal())));
    }

    /**
     * Only VMs whose names contain the cluster's name prefix: CloudStack filters by keyword on
     * the server, so a large account costs one page instead of one per 500 VMs. Mapped VMs named
     * otherwise are still judged by their map rows.
     */
    @Override
    public List<OwnedVm> ownerVms(ClusterView cluster) {
        String keyword = CksNodeNames.of(cluster.name(), cluster.id()).keyword();
        List<VirtualMachine> vms = answer(() -> client.get().listVirtualMachines(VmQuery.allOf(scope(cluster)).withKeyword(keyword)));
        List<OwnedVm> owned = new ArrayList<>(vms.size());
        for (VirtualMachine vm : vms) {
            owned.add(new OwnedVm(vm.id(), vm.name(), vm.state(), vm.createdAt().orElse(null),
                    CloudStackTimestamps.parse(vm.lastUpdated()).orElse(null)));
        }
        return owned;
    }

    @Override
    public Set<String> otherClustersMappedIds(ClusterView cluster) {
        List<KubernetesCluster> clusters = answer(() -> client.get().listKubernetesClusters(scope(cluster)));
        Set<String> ids = new HashSet<>();
        clusters.stream().filter(other -> !other.id().equals(cluster.id())).forEach(other -> ids.addAll(other.vmIds()));
        return ids;
    }

    static ClusterView view(KubernetesCluster cluster) {
        List<MappedVm> rows = new ArrayList<>();
        Set<String> withRow = new LinkedHashSet<>();
        for (VirtualMachine vm : cluster.virtualMachines()) {
            rows.add(new MappedVm(vm.id(), vm.name(), vm.state(), vm.kubernetesNodeVersion()));
            withRow.add(vm.id());
        }
        // Older servers send bare ids; an id without a VM object is a VM the server could not find.
        cluster.virtualMachineIds().stream().filter(id -> !withRow.contains(id)).forEach(id -> rows.add(new MappedVm(id, null, null)));
        Integer declared = cluster.size() == null ? null
                : Math.toIntExact(cluster.size() + cluster.controlNodeCount() + (cluster.etcdNodes() == null ? 0 : cluster.etcdNodes()));
        return new ClusterView(cluster.id(), cluster.name(), cluster.state(), cluster.clusterType(), rows,
                new ClusterView.Owner(cluster.account(), cluster.domainId(), cluster.projectId()), declared);
    }

    private static OwnerScope scope(ClusterView cluster) {
        ClusterView.Owner owner = cluster.owner();
        if (owner == null) {
            return OwnerScope.CALLER;
        }
        if (owner.projectId() != null && !owner.projectId().isBlank()) {
            return OwnerScope.project(owner.projectId());
        }
        return owner.account() != null && owner.domainId() != null ? OwnerScope.account(owner.account(), owner.domainId())
                : OwnerScope.CALLER;
    }

    /** CloudStack errors, an answer of an unexpected shape and an unusable credentials Secret all mean: no answer this time, with the reason. */
    private static <T> T answer(Supplier<T> call) {
        try {
            return call.get();
        } catch (CloudStackException | CloudStackAccess.Unavailable | IllegalArgumentException | KubernetesClientException e) {
            throw new AuditSourceException(sentence(e.getMessage()), e);
        }
    }

    private static String sentence(String text) {
        if (text == null || text.isBlank()) {
            return "CloudStack gave no reason.";
        }
        String trimmed = text.strip();
        String capitalised = Character.toUpperCase(trimmed.charAt(0)) + trimmed.substring(1);
        return capitalised.endsWith(".") ? capitalised : capitalised + ".";
    }
}
