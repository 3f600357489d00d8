package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;

/** queryAsyncJobResult's answer: {@code jobstatus} 0 pending, 1 succeeded, 2 failed. */
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
        @JsonProperty("jobinstanceid") String jobInstanceId) {

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
}
