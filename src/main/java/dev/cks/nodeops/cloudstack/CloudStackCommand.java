package dev.cks.nodeops.cloudstack;

/**
 * Every CloudStack API command the operator sends, and nothing else: the client can only send
 * these, so this list is the API key's least-privilege role (docs/cloudstack-versions.md lists the
 * same commands, and a test keeps the two equal).
 *
 * @param apiName the command as the API names it
 * @param write whether it changes anything (sent as POST, never repeated when its outcome is unknown)
 * @param commandClass the simple name of CloudStack's command class, as an async job's {@code cmd}
 *        names it (the admin variant adds {@code ByAdmin})
 */
public enum CloudStackCommand {
    LIST_KUBERNETES_CLUSTERS("listKubernetesClusters", false, "ListKubernetesClustersCmd"),
    LIST_KUBERNETES_SUPPORTED_VERSIONS("listKubernetesSupportedVersions", false, "ListKubernetesSupportedVersionsCmd"),
    LIST_VIRTUAL_MACHINES("listVirtualMachines", false, "ListVMsCmd"),
    LIST_CAPABILITIES("listCapabilities", false, "ListCapabilitiesCmd"),
    QUERY_ASYNC_JOB_RESULT("queryAsyncJobResult", false, "QueryAsyncJobResultCmd"),
    LIST_ASYNC_JOBS("listAsyncJobs", false, "ListAsyncJobsCmd"),
    LIST_APIS("listApis", false, "ListApisCmd"),
    SCALE_KUBERNETES_CLUSTER("scaleKubernetesCluster", true, "ScaleKubernetesClusterCmd"),
    REMOVE_NODES_FROM_KUBERNETES_CLUSTER("removeNodesFromKubernetesCluster", true, "RemoveNodesFromKubernetesClusterCmd"),
    REMOVE_VIRTUAL_MACHINES_FROM_KUBERNETES_CLUSTER("removeVirtualMachinesFromKubernetesCluster", true,
            "RemoveVirtualMachinesFromKubernetesClusterCmd"),
    DESTROY_VIRTUAL_MACHINE("destroyVirtualMachine", true, "DestroyVMCmd"),
    ATTACH_ISO("attachIso", true, "AttachIsoCmd"),
    DETACH_ISO("detachIso", true, "DetachIsoCmd");

    private final String apiName;
    private final boolean write;
    private final String commandClass;

    CloudStackCommand(String apiName, boolean write, String commandClass) {
        this.apiName = apiName;
        this.write = write;
        this.commandClass = commandClass;
    }

    public String apiName() {
        return apiName;
    }

    public boolean isWrite() {
        return write;
    }

    public String commandClass() {
        return commandClass;
    }
}
