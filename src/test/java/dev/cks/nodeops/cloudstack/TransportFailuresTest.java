package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

class TransportFailuresTest {

    @Test
    void failuresBeforeSendingProveTheRequestNeverArrived() {
        assertThat(TransportFailures.neverReachedServer(new ConnectException("refused"))).isTrue();
        assertThat(TransportFailures.neverReachedServer(new UnknownHostException("cloud.example"))).isTrue();
        assertThat(TransportFailures.neverReachedServer(new SSLHandshakeException("bad cert"))).isTrue();
        assertThat(TransportFailures.neverReachedServer(new IOException("wrapped", new ConnectException("refused")))).isTrue();
    }

    @Test
    void failuresAfterSendingMayHaveReachedTheServer() {
        assertThat(TransportFailures.neverReachedServer(new SocketTimeoutException("timeout"))).isFalse();
        assertThat(TransportFailures.neverReachedServer(new IOException("unexpected end of stream"))).isFalse();
    }
}
