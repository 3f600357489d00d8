package dev.cks.nodeops.realnode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.cks.nodeops.testbed.LoopDeviceIsoDrive;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * What one real upgrade took, phase by phase, from what was seen of it: the NodeUpgrade's and the
 * node's state changes ({@link UpgradeWatch}), the ISO drive's inserts and ejects, the node script's
 * own timestamped lines, the systemctl stand-in's log. Written as markdown for docs/upgrade.md.
 */
record UpgradeReport(Instant created, NodeUpgrade done, UpgradeWatch watch, List<LoopDeviceIsoDrive.Change> driveChanges, List<Job> jobs,
        String jobLog, List<String> systemctl, List<Event> events, OperatorProcess operator, List<CksUpgradeBed.Restart> restarts) {
    private static final Pattern SCRIPT_LINE = Pattern.compile("(?m)^(\\d\\d:\\d\\d:\\d\\d) (.+)$");

    /** A phase: from, to (either may be unknown). */
    record Phase(String name, Optional<Instant> from, Optional<Instant> to) {
        String seconds() {
            return from.isPresent() && to.isPresent() ? String.format("%.1f", Duration.between(from.get(), to.get()).toMillis() / 1000.0) : "?";
        }
    }

    List<Phase> phases() {
        Optional<Instant> draining = watch.first("node", v -> v.equals("Cordoned") || v.equals("Draining"));
        Optional<Instant> upgrading = watch.first("node", "Upgrading");
        // The ISO canary inserts and ejects the ISO before the node is cordoned; the upgrade's own come after Upgrading.
        Optional<Instant> canaryEjected = driveChanges.stream().filter(c -> c.action().equals("eject") && draining.map(c.at()::isBefore).orElse(true))
                .map(LoopDeviceIsoDrive.Change::at).findFirst();
        Optional<Instant> inserted = driveChanges.stream().filter(c -> c.action().equals("insert") && upgrading.map(at -> !c.at().isBefore(at)).orElse(false))
                .map(LoopDeviceIsoDrive.Change::at).findFirst();
        Optional<Instant> ejected = driveChanges.stream().filter(c -> c.action().equals("eject") && inserted.map(c.at()::isAfter).orElse(false))
                .map(LoopDeviceIsoDrive.Change::at).findFirst();
        Optional<Instant> jobCreated = jobs.stream().findFirst().map(j -> Instant.parse(j.getMetadata().getCreationTimestamp()));
        Optional<Instant> applyStarted = scriptLine("kubeadm upgrade apply");
        Optional<Instant> replacing = scriptLine("replacing kubelet and kubectl");
        Optional<Instant> stopped = systemctlCall("systemctl stop kubelet");
        Optional<Instant> restarted = systemctlCall("systemctl restart kubelet");
        Optional<Instant> readyAtTarget = readyAtTarget();
        Optional<Instant> succeeded = watch.first("nu", "Succeeded");
        Optional<Instant> uncordoned = watch.changes().stream().filter(c -> c.subject().equals("unschedulable") && c.value().equals("false"))
                .map(UpgradeWatch.Change::at).filter(at -> upgrading.isPresent() && at.isAfter(upgrading.get())).findFirst();
        List<Phase> phases = new ArrayList<>();
        phases.add(new Phase("ISO canary (NodeUpgrade created → the canary's ISO ejected)", Optional.of(created), canaryEjected));
        phases.add(new Phase("accepted, locked, cordoned (NodeUpgrade created → node Cordoned/Draining)", Optional.of(created), draining));
        phases.add(new Phase("drain (→ node Upgrading)", draining, upgrading));
        phases.add(new Phase("ISO attach (attachIso job polled → loop device)", upgrading, inserted));
        phases.add(new Phase("Job created (seconds precision)", inserted, jobCreated));
        phases.add(new Phase("script until `kubeadm upgrade apply` (mount, image import, kubeadm install; seconds precision)", jobCreated, applyStarted));
        phases.add(new Phase("kubeadm upgrade apply (seconds precision)", applyStarted, replacing));
        phases.add(new Phase("kubelet stopped, binaries replaced, restarted (systemctl stop → restart returned)", stopped, restarted));
        phases.add(new Phase("kubelet restarted → node Ready at the target", restarted, readyAtTarget));
        phases.add(new Phase("ISO detach (after the Job ended → loop device gone)", readyAtTarget.isPresent() && restarted.isPresent() ? restarted : Optional.empty(), ejected));
        phases.add(new Phase("node Ready → uncordoned", readyAtTarget, uncordoned));
        phases.add(new Phase("whole NodeUpgrade (created → Succeeded)", Optional.of(created), succeeded));
        return phases;
    }

    /** The first moment the node was Ready and reported the target version. */
    private Optional<Instant> readyAtTarget() {
        String kubelet = null;
        boolean ready = false;
        for (UpgradeWatch.Change change : watch.changes()) {
            switch (change.subject()) {
                case "kubelet" -> kubelet = change.value();
                case "ready" -> ready = Boolean.parseBoolean(change.value());
                default -> { }
            }
            if (ready && done.getSpec().getTargetVersion().equals(kubelet)) {
                return Optional.of(change.at());
            }
        }
        return Optional.empty();
    }

    private Optional<Instant> scriptLine(String text) {
        Matcher line = SCRIPT_LINE.matcher(jobLog);
        LocalDate day = created.atOffset(ZoneOffset.UTC).toLocalDate();
        while (line.find()) {
            if (line.group(2).contains(text)) {
                return Optional.of(LocalTime.parse(line.group(1)).atDate(day).toInstant(ZoneOffset.UTC));
            }
        }
        return Optional.empty();
    }

    private Optional<Instant> systemctlCall(String call) {
        return systemctl.stream().filter(line -> line.endsWith(call)).map(line -> Instant.parse(line.split(" ", 2)[0])).findFirst();
    }

    void write(Path file) throws IOException {
        StringBuilder md = new StringBuilder();
        md.append("# NodeUpgrade ").append(done.getMetadata().getName()).append(": ").append(UpgradeWatch.nodeStatus(done, watch.nodeName()).getFromVersion())
                .append(" → ").append(done.getSpec().getTargetVersion()).append(", ").append(done.getStatus().getPhase())
                .append(" (created ").append(created).append(")\n\n");
        md.append("| phase | seconds | from (s) | to (s) |\n|---|---|---|---|\n");
        for (Phase phase : phases()) {
            md.append("| ").append(phase.name()).append(" | ").append(phase.seconds()).append(" | ").append(offset(phase.from()))
                    .append(" | ").append(offset(phase.to())).append(" |\n");
        }
        md.append("\n## API server not ready (GET /readyz every 100 ms)\n\n| start (s) | end (s) | seconds | first error |\n|---|---|---|---|\n");
        for (UpgradeWatch.Outage outage : watch.outages()) {
            md.append("| ").append(offset(Optional.of(outage.start()))).append(" | ").append(offset(Optional.of(outage.end()))).append(" | ")
                    .append(String.format("%.1f", outage.duration().toMillis() / 1000.0)).append(" | ").append(outage.firstError()).append(" |\n");
        }
        md.append("\n## Operator process exits (restarted after ").append(CksUpgradeBed.RESTART_DELAY.toSeconds())
                .append(" s, as by its Deployment)\n\n| exited (s) | exit code | restarted (s) |\n|---|---|---|\n");
        for (CksUpgradeBed.Restart restart : restarts) {
            md.append("| ").append(offset(Optional.of(restart.exited()))).append(" | ").append(restart.exitCode()).append(" | ")
                    .append(offset(Optional.of(restart.restarted()))).append(" |\n");
        }
        md.append("\n## State changes seen (every 250 ms; s after creation)\n\n```\n");
        for (UpgradeWatch.Change change : watch.changes()) {
            md.append(String.format("%7s  %-13s %s%n", offset(Optional.of(change.at())), change.subject(), change.value()));
        }
        md.append("```\n\n## kubectl get nu -w\n\n```\n").append(read(watch.dir().resolve("kubectl-get-nu-w.txt"))).append("```\n");
        md.append("\n## Events of the NodeUpgrade\n\n```\n");
        for (Event event : events) {
            md.append(event.getType()).append("  ").append(event.getReason()).append("  ").append(event.getMessage()).append('\n');
        }
        md.append("```\n\n## systemctl calls (the bed's stand-in)\n\n```\n");
        systemctl.forEach(line -> md.append(line).append('\n'));
        md.append("```\n\n## The upgrade Job's log\n\n```\n").append(jobLog).append("```\n");
        md.append("\n## Operator log (this run, all its processes)\n\n```\n").append(operator.output()).append("```\n");
        Files.writeString(file, md.toString());
    }

    private String offset(Optional<Instant> at) {
        return at.map(a -> String.format("%.1f", Duration.between(created, a).toMillis() / 1000.0)).orElse("?");
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file) : "";
    }
}
