package dev.cks.nodeops.audit;

import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Operator-wide audit settings; each VMMapAudit's spec refines them. */
@ConfigMapping(prefix = "cks.audit")
public interface AuditSettings {
    /** Turns every VMMapAudit off, whatever its spec says. */
    @WithDefault("true")
    boolean enabled();

    /** The CKS cluster id used when a VMMapAudit leaves spec.clusterId empty. */
    Optional<String> clusterId();
}
