package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * An async job as queryAsyncJobResult and listAsyncJobs return it (AsyncJobJoinDaoImpl.newAsyncJobResponse):
 * {@code jobstatus} 0 pending, 1 succeeded, 2 failed. {@code cmd} is the command's class name (e.g.
 * {@code ...user.vm.DestroyVMCmd}, {@code ...admin.vm.DestroyVMCmdByAdmin} for root admins);
 * {@code jobinstanceid} is set only for commands that name their resource.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record AsyncJobResult(
        @JsonProperty("jobid") String jobId,
        @JsonProperty("jobstatus") int jobStatus,
        @JsonProperty("jobprocstatus") Integer jobProcStatus,
        @JsonProperty("jobresultcode") Integer jobResultCode,
        @JsonProperty("jobresulttype") String jobResultType,
        @JsonProperty("jobresult") JsonNode jobResult,
        @JsonProperty("cmd") String cmd,
        @JsonProperty("jobinstancetype") String jobInstanceType,
        @JsonProperty("jobinstanceid") String jobInstanceId,
        @JsonProperty("created") String created) {

    public static final int PENDING = 0;
    public static final int SUCCEEDED = 1;
    public static final int FAILED = 2;

    public boolean isPending() {
        return jobStatus == PENDING;
    }

    public boolean succeeded() {
        return jobStatus == SUCCEEDED;
    }

    public boolean failed() {
        return jobStatus == FAILED;
    }

    /** Whether the job runs the given API command, whatever package and admin variant its class has. */
    public boolean runs(String apiCommandClass) {
        if (cmd == null) {
            return false;
        }
        String simpleName = cmd.substring(cmd.lastIndexOf('.') + 1);
        return simpleName.equals(apiCommandClass) || simpleName.equals(apiCommandClass + "ByAdmin");
    }
}
