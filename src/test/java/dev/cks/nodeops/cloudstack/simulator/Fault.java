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

    /** The server acts on the request, then its answer comes only this much later: after the client stopped waiting. */
    record AnswerLate(Duration delay) implements Fault {
    }

    /**
     * The server acts on the request, then the client gets this instead of its answer: a proxy's error
     * page after the upstream timed out, or (body null) the real answer cut off half-way.
     */
    record AnswerReplaced(int status, String body) implements Fault {
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

    /** A 502 page from a proxy whose upstream acted but answered too late. */
    static Fault actsThenBadGateway() {
        return new AnswerReplaced(502, "<html><body>502 Bad Gateway</body></html>");
    }

    /** A 504 page from a proxy that stopped waiting for its upstream, which went on and acted. */
    static Fault actsThenGatewayTimeout() {
        return new AnswerReplaced(504, "<html><body><h1>504 Gateway Time-out</h1></body></html>");
    }

    /** A read timeout after sending: the server acts at once, its answer comes after the client gave up. */
    static Fault actsThenAnswersLate(Duration delay) {
        return new AnswerLate(delay);
    }

    /** A 200 whose body was cut off after the server acted (a proxy or connection reset mid-body). */
    static Fault actsThenTruncated() {
        return new AnswerReplaced(200, null);
    }
}
