package dev.cks.nodeops.cloudstack.simulator;

import java.time.Duration;

/** Something going wrong for one request, queued per command with {@link CloudStackSimulator#injectFault}. */
public sealed interface Fault {

    /** An HTTP error with CloudStack's error body (errorcode = status), as the server or a limiter answers. */
    record ApiErrorAnswer(int status, int csErrorCode, String errorText) implements Fault {
    }

    /** An HTTP error with a non-CloudStack body, like a proxy in front of the management server. */
    record ProxyErrorAnswer(int status, String body) implements Fault {
    }

    /** The answer is held back this long, then the request is handled normally. */
    record SlowAnswer(Duration delay) implements Fault {
    }

    /** The connection is closed without an answer after the request was read, before the server acts on it. */
    record DroppedConnection() implements Fault {
    }

    /** The server acts on the request (a write is done, its job started), then the answer is lost. */
    record AnswerLost() implements Fault {
    }

    static Fault serverError() {
        return new ApiErrorAnswer(530, 9999, "Internal error executing command, please contact your system administrator");
    }

    static Fault badGateway() {
        return new ProxyErrorAnswer(502, "<html><body>502 Bad Gateway</body></html>");
    }

    static Fault throttled() {
        return new ApiErrorAnswer(429, 9999, "The maximum number of API requests per second has been reached");
    }

    static Fault slow(Duration delay) {
        return new SlowAnswer(delay);
    }

    static Fault droppedConnection() {
        return new DroppedConnection();
    }

    static Fault answerLost() {
        return new AnswerLost();
    }
}
