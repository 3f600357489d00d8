/**
 * The CloudStack API as the operator needs it: CKS clusters and their VM maps, VMs, supported
 * versions and ISOs, scale-down by node ids, destroy/expunge, and async job polling.
 *
 * <p>Decisions worth knowing before changing anything here:
 * <ul>
 * <li>Every command goes through {@code CloudStackClient.execute}: one place signs, sends,
 * retries, parses errors, logs and records metrics.</li>
 * <li>Requests are signed with {@code signatureVersion=3} and an {@code expires} ten minutes ahead
 * by default, so a leaked URL soon stops working; {@code withSignatureLifetime(Duration.ZERO)}
 * turns it off for servers with a badly skewed clock. The same lifetime (plus a margin) is how long a
 * write whose answer was lost is awaited before it is sent again
 * ({@code CloudStackClientSettings.unansweredWriteWindow}); the operator's
 * {@code cks.cloudstack.signature-lifetime-seconds} sets both.</li>
 * <li>Reads are GET and retried on transport errors, 5xx and 429 with jittered exponential
 * backoff, bounded in attempts and total time. Writes are POST and repeated only when the request
 * provably never left this process (refused connection, DNS, TLS handshake): a repeated
 * scaleKubernetesCluster could remove more nodes than asked for. OkHttp's own silent retry is
 * off for the same reason, and writes use fresh connections so an idle-closed pooled connection
 * cannot make a write fail ambiguously.</li>
 * <li>The API key, secret key and signatures never reach logs, exception messages or metric tags:
 * all such text passes {@link dev.cks.nodeops.cloudstack.SecretRedactor}, and transport
 * exceptions are not chained as causes because their messages may name the URL.</li>
 * <li>Models ignore unknown fields and treat missing lists as empty, because every CloudStack
 * release adds fields and empty lists arrive as {@code {}}.</li>
 * <li>The client sends only the commands of {@link dev.cks.nodeops.cloudstack.CloudStackCommand},
 * which are the API key's documented least-privilege role. CloudStack runs an async command's own
 * checks inside the job, so a refused scale or detach is a failed job, not an error answer. A failed
 * write is classified ({@link dev.cks.nodeops.cloudstack.WriteFailure}): refused before execution, or
 * unknown; an unknown one is looked up ({@link dev.cks.nodeops.cloudstack.LostAnswer}: CloudStack's
 * state, then {@code listAsyncJobs}) and sent again only when it left no trace and its signature has
 * expired, so CloudStack can no longer take it.</li>
 * </ul>
 */
package dev.cks.nodeops.cloudstack;
