package dev.cks.nodeops.cloudstack;

/**
 * The one failure type of the CloudStack client: an API error answer, an HTTP error without a
 * CloudStack body, a transport failure, a failed async job or a job that did not finish in time.
 * Messages are built from redacted text only.
 */
public class CloudStackException extends RuntimeException {

    /** The HTTP status used when no HTTP answer was received at all. */
    public static final int NO_HTTP_STATUS = -1;

    /** CloudStack's ApiErrorCode for "the command does not exist or is not available for user". */
    public static final int UNSUPPORTED_ACTION_ERROR = 432;
    public static final int UNAUTHORIZED = 401;
    public static final int API_LIMIT_EXCEEDED = 429;
    /** ApiErrorCode.PARAM_ERROR: an InvalidParameterValueException, also when thrown inside an async job. */
    public static final int PARAM_ERROR = 431;
    /** ApiErrorCode.ACCOUNT_ERROR: what ApiServer.handleRequest answers for a PermissionDeniedException. */
    public static final int ACCOUNT_ERROR = 531;
    /**
     * CSExceptionErrorCode of com.cloud.exception.PermissionDeniedException (utils CSExceptionErrorCode:
     * 4365; the developer guide's table saying 4505 is not what the server sends).
     */
    public static final int PERMISSION_DENIED_CS_ERROR = 4365;
    /** TemplateManagerImpl.detachIso's refusal when the VM has no ISO, as the failed detachIso job's errortext (code 431). */
    public static final String NO_ISO_ATTACHED = "The specified VM has no ISO attached to it.";

    public enum Kind {
        /** CloudStack answered with an error body (errorcode/cserrorcode/errortext). */
        API_ERROR,
        /** An HTTP error whose body is not a CloudStack error (proxy page, empty body). */
        HTTP_ERROR,
        /** No (complete) HTTP answer: connect, TLS, read timeout, dropped connection. */
        TRANSPORT_ERROR,
        /** The async job finished with jobstatus 2. */
        JOB_FAILED,
        /** The async job was still pending when the wait ended. */
        JOB_TIMEOUT
    }

    private final Kind kind;
    private final String command;
    private final int httpStatus;
    private final Integer errorCode;
    private final Integer csErrorCode;
    private final String errorText;
    private final String jobId;
    private boolean requestNeverSent;

    public CloudStackException(Kind kind, String command, int httpStatus, Integer errorCode, Integer csErrorCode,
            String errorText, String jobId, Throwable cause) {
        super(describe(kind, command, httpStatus, errorCode, csErrorCode, errorText, jobId), cause);
        this.kind = kind;
        this.command = command;
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
        this.csErrorCode = csErrorCode;
        this.errorText = errorText;
        this.jobId = jobId;
    }

    private static String describe(Kind kind, String command, int httpStatus, Integer errorCode, Integer csErrorCode,
            String errorText, String jobId) {
        StringBuilder text = new StringBuilder("CloudStack ").append(command);
        switch (kind) {
            case JOB_FAILED -> text.append(" job ").append(jobId).append(" failed");
            case JOB_TIMEOUT -> text.append(" job ").append(jobId).append(" did not finish in time");
            case TRANSPORT_ERROR -> text.append(" got no answer");
            default -> text.append(" failed");
        }
        if (httpStatus != NO_HTTP_STATUS) {
            text.append(" (HTTP ").append(httpStatus);
        } else {
            text.append(" (no HTTP status");
        }
        if (errorCode != null) {
            text.append(", errorcode ").append(errorCode);
        }
        if (csErrorCode != null) {
            text.append(", cserrorcode ").append(csErrorCode);
        }
        text.append(')');
        if (errorText != null && !errorText.isBlank()) {
            text.append(": ").append(errorText);
        }
        if (errorCode != null && errorCode == UNAUTHORIZED) {
            text.append(". Check the API URL, API key and secret key in the CloudStack credentials Secret.");
        } else if (isPermissionProblem(errorCode, csErrorCode)) {
            text.append(". The API key's role must allow ").append(command).append('.');
        }
        return text.toString();
    }

    private static boolean isPermissionProblem(Integer errorCode, Integer csErrorCode) {
        return (errorCode != null && (errorCode == UNSUPPORTED_ACTION_ERROR || errorCode == ACCOUNT_ERROR))
                || (csErrorCode != null && csErrorCode == PERMISSION_DENIED_CS_ERROR);
    }

    public Kind kind() {
        return kind;
    }

    public String command() {
        return command;
    }

    /** HTTP status of the answer, or {@link #NO_HTTP_STATUS}; for a failed job the status of the poll (200). */
    public int httpStatus() {
        return httpStatus;
    }

    public Integer errorCode() {
        return errorCode;
    }

    public Integer csErrorCode() {
        return csErrorCode;
    }

    public String errorText() {
        return errorText;
    }

    public String jobId() {
        return jobId;
    }

    /** True when the request provably never reached the server (refused connection, DNS, TLS handshake). */
    public boolean requestNeverSent() {
        return requestNeverSent;
    }

    void markRequestNeverSent() {
        this.requestNeverSent = true;
    }

    /** The keys were rejected: wrong key pair, disabled user or an expired signature. */
    public boolean isAuthenticationFailure() {
        return errorCode != null && errorCode == UNAUTHORIZED;
    }

    /** The keys' role does not allow this command (432, ApiServer.verifyRequest via the role's API checker). */
    public boolean isUnsupportedAction() {
        return errorCode != null && errorCode == UNSUPPORTED_ACTION_ERROR;
    }

    /** The keys are valid but their role may not run this command or touch this resource. */
    public boolean isPermissionDenied() {
        return isPermissionProblem(errorCode, csErrorCode);
    }

    /**
     * A UUID parameter names nothing CloudStack ever had: ParamProcessWorker.translateUuidToInternalId
     * refuses it before the command runs (removed entities still translate, so this is not "deleted").
     */
    public boolean isUnknownId() {
        return errorCode != null && errorCode == PARAM_ERROR && errorText != null
                && errorText.contains("due to incorrect long value format, or entity does not exist");
    }

    /**
     * detachIso found no ISO on the VM: the detach this call wanted is already true. Matched on the
     * text alone: ApiAsyncJobDispatcher records it as 431, but older dispatchers record every job
     * failure as 530 and some prefix the exception's class name.
     */
    public boolean isNoIsoAttached() {
        return errorText != null && errorText.contains(NO_ISO_ATTACHED);
    }

    /**
     * A write that may or may not have happened: the request may have reached the server but no
     * complete CloudStack answer came back, or its job was still running when the wait ended.
     * CloudStack's state must be read before deciding ({@link WriteFailure}).
     */
    public boolean outcomeUnknown() {
        return WriteFailure.of(this) == WriteFailure.UNKNOWN;
    }
}
