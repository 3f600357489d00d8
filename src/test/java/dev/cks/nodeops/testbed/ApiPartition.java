package dev.cks.nodeops.testbed;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay between one operator process and the bed's API server, which the test can cut: the
 * operator is partitioned from the API server (every connection dropped, new ones refused at once)
 * while everything else still reaches it. Bytes pass through untouched, TLS included; the API server's
 * certificate names 127.0.0.1, so the relay's kubeconfig only changes the port. Counts the connections
 * opened while cut or after, so a test can show a process did not even try.
 */
public final class ApiPartition implements AutoCloseable {
    private final ServerSocket server;
    private final URI upstream;
    private final Path kubeconfig;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private volatile boolean cut;
    private volatile boolean silent;
    private final Thread acceptor;

    /** A relay for the process that would use this kubeconfig; {@link #kubeconfig} is the same one through the relay. */
    public ApiPartition(TestBed bed, Path direct, String name) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        String original = Files.readString(direct);
        this.upstream = URI.create(bed.client().getMasterUrl().toString());
        String relayed = original.replace(upstream.getHost() + ":" + upstream.getPort(), "127.0.0.1:" + server.getLocalPort());
        if (relayed.equals(original)) {
            throw new IllegalStateException("the bed's kubeconfig does not name " + upstream.getHost() + ":" + upstream.getPort());
        }
        this.kubeconfig = bed.projectRoot().resolve("target/kubeconfig-relay-" + name);
        Files.writeString(kubeconfig, relayed);
        this.acceptor = new Thread(this::accept, "api-partition-" + name);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A kubeconfig whose API server is this relay. */
    public Path kubeconfig() {
        return kubeconfig;
    }

    /** Drops every connection and refuses new ones until {@link #heal}. */
    public void cut() {
        cut = true;
        open.forEach(ApiPartition::closeQuietly);
        open.clear();
        connections.set(0);
    }

    /**
     * Answers nothing from now on, as when the API server's packets are dropped rather than refused: open
     * connections stay open and carry nothing, new ones are accepted and never answered. Until {@link #heal}.
     */
    public void silence() {
        silent = true;
        connections.set(0);
    }

    public void heal() {
        connections.set(0);
        cut = false;
        silent = false;
    }

    /** Connections the process opened since the last {@link #cut} or {@link #heal}. */
    public int connectionsSince() {
        return connections.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                connections.incrementAndGet();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                if (silent) {
                    // Kept (so not closed by the collector) and never read.
                    open.add(client);
                    continue;
                }
                Socket api = new Socket();
                api.connect(new InetSocketAddress(upstream.getHost(), upstream.getPort()), 5000);
                open.add(client);
                open.add(api);
                pump(client, api);
                pump(api, client);
            } catch (IOException e) {
                // a refused upstream, or the relay closing: the client sees its connection drop
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int read; (read = in.read(buffer)) >= 0;) {
                    if (!silent) {
                        out.write(buffer, 0, read);
                        out.flush();
                    }
                }
            } catch (IOException e) {
                // the other side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "api-partition-pump");
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        open.forEach(ApiPartition::closeQuietly);
    }
}
