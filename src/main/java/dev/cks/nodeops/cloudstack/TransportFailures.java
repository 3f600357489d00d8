package dev.cks.nodeops.cloudstack;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import javax.net.ssl.SSLHandshakeException;

/**
 * Tells failures that happened before any byte of the request could reach the server from those
 * where the server may have received it. Only the first kind makes a write safe to repeat.
 */
public final class TransportFailures {

    private TransportFailures() {
    }

    public static boolean neverReachedServer(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            // A TLS handshake completes before the HTTP request is written, so its failure also
            // proves the command was not sent.
            if (cause instanceof ConnectException || cause instanceof UnknownHostException
                    || cause instanceof NoRouteToHostException || cause instanceof SSLHandshakeException) {
                return true;
            }
        }
        return false;
    }
}
