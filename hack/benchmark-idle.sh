#!/usr/bin/env bash
# The operator idle beside many Nodes: memory, CPU and time to ready, with the image's JVM defaults
# ("new") and the JVM's own defaults the image had before ("old"), alternating run by run.
#
#   ./mvnw package -DskipTests && hack/image.sh && hack/benchmark-idle.sh [NODES] [RUNS]
#
# BASELINE_APP=DIR (a quarkus-app directory of another build, e.g. the last release's) with
# BASELINE_OPTIONS (its image's JDK_JAVA_OPTIONS) adds a third setting, "baseline", to each run: a
# change to the operator or its JVM options measured side by side with what it replaces.
#
# Brings up a test bed named cksidle with NODES KWOK workers (default 1000), runs the operator from
# the image's own Java runtime, jar and class-data archive (target/image/) as the image's entrypoint does, signed in as the
# chart's ServiceAccount (a token, the chart's RBAC), with
# -XX:MaxRAM set to the chart's memory limit (what the JVM sees in that container), lets it idle for
# 60 s after ready, and prints one line per run: time to ready, RSS, heap in use, heap after the last
# collection, metaspace, collections (count, pause time, its share of the uptime), CPU seconds (start
# included), load average. The bed is torn down at the end.
#
# SPLIT_CPUS=1 runs the bed's control plane (API server, etcd, KWOK, controllers) on the first CPU and
# the operator on the others, as in a cluster, where the operator's pod runs on a worker and the API
# server on a control-plane node, so neither takes CPU time from the other.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
nodes=${1:-1000}
runs=${2:-2}
name=cksidle
# The image's files: its Java runtime, its application as it is at /deployments (hack/image.sh's copy, with the
# image's file times) and its class-data archive, which the image's runtime finds as its default and this
# staged runtime is told where to find.
java="$root/target/image/runtime/opt/java/bin/java"
jar="$root/target/image-cds/deployments/quarkus-run.jar"
archive="$root/target/image/application/opt/java/lib/server/classes.jsa"
limit=$(sed -n 's/^  limits: {memory: \([0-9]*\)Mi}$/\1/p' "$root/deploy/helm/cks-node-operator/values.yaml")
image_options=$(sed -n 's/^ *JDK_JAVA_OPTIONS="\(.*\)"$/\1/p' "$root/Dockerfile")
image_arenas=$(sed -n 's/.*MALLOC_ARENA_MAX=\([0-9][0-9]*\).*/\1/p' "$root/Dockerfile")
[ -x "$java" ] && [ -f "$jar" ] && [ -f "$archive" ] || { echo "build first: ./mvnw package -DskipTests && hack/image.sh" >&2; exit 1; }
[ -n "$limit" ] || { echo "cannot read the chart's memory limit from values.yaml" >&2; exit 1; }
[ -n "$image_options" ] && [ -n "$image_arenas" ] || { echo "cannot read the image's JVM options from the Dockerfile" >&2; exit 1; }

kubeconfig=$("$root/hack/testbed.sh" up "$name" "$nodes" | tail -1)
trap '"$root/hack/testbed.sh" down "$name" >/dev/null 2>&1 || true' EXIT
operator_cpus=""
if [ "${SPLIT_CPUS:-}" = 1 ]; then
  [ "$(nproc)" -ge 2 ] || { echo "SPLIT_CPUS=1 needs 2 CPUs or more" >&2; exit 1; }
  operator_cpus="1-$(( $(nproc) - 1 ))"
  for pidfile in "$(dirname "$kubeconfig")/clusters/$name/pids/"*.pid; do
    taskset -a -cp 0 "$(cat "$pidfile")" >/dev/null
  done
fi
export KUBECONFIG="$kubeconfig"
eval "$("$root/hack/testbed.sh" env "$name")" # the bed's kubectl
# The operator signs in as the pod does: the chart's ServiceAccount, by token, with the chart's RBAC.
operator_kubeconfig="$root/target/benchmark-idle.kubeconfig"
"$root/hack/testbed.sh" operator-kubeconfig "$name" "$operator_kubeconfig"

# heap in use, heap after the last collection (MiB), metaspace (MiB) and collections (count, pause
# seconds, share of the process's uptime), from the operator's Prometheus metrics
heap_figures() {
  python3 -c '
import re, sys
patterns = {"used": r"jvm_memory_used_bytes\{area=\"heap\".*\}", "meta": r"jvm_memory_used_bytes\{.*id=\"Metaspace\".*\}",
            "after": r"jvm_gc_live_data_size_bytes(\{.*\})?", "gcs": r"jvm_gc_pause_seconds_count(\{.*\})?",
            "pauses": r"jvm_gc_pause_seconds_sum(\{.*\})?", "uptime": r"process_uptime_seconds(\{.*\})?"}
f = dict.fromkeys(patterns, 0.0)
for line in sys.stdin:
    for name, pattern in patterns.items():
        m = re.match(pattern + r" (\S+)$", line)
        if m: f[name] += float(m.group(m.lastindex))
share = "%.1f%%" % (100 * f["pauses"] / f["uptime"]) if f["uptime"] else "no uptime metric"
print("heap_used=%.0fMiB live_after_gc=%.0fMiB metaspace=%.0fMiB gc=%d/%.2fs(%s)"
      % (f["used"] / 2**20, f["after"] / 2**20, f["meta"] / 2**20, f["gcs"], f["pauses"], share))'
}

measure() { # label, JDK_JAVA_OPTIONS, MALLOC_ARENA_MAX (empty: glibc's default), jar, JVM options of the run
  local label=$1 options=$2 arenas=$3 jar=$4 extra=${5:-} port=$((20000 + RANDOM % 10000))
  kubectl -n cks-node-operator delete lease --all >/dev/null 2>&1 || true # no wait for the last run's Lease
  local load_before; load_before=$(cut -d' ' -f1 /proc/loadavg)
  local start; start=$(date +%s%N)
  ${operator_cpus:+taskset -c $operator_cpus} env ${arenas:+MALLOC_ARENA_MAX=$arenas} KUBECONFIG="$operator_kubeconfig" JDK_JAVA_OPTIONS="$options" "$java" -XX:MaxRAM=${limit}m $extra -Djava.util.logging.manager=org.jboss.logmanager.LogManager \
    -Dquarkus.http.port=$port -Dcks.namespace=cks-node-operator -Dquarkus.log.level=WARN -jar "$jar" \
    > "$root/target/benchmark-idle-$label.log" 2>&1 &
  local pid=$!
  until curl -sf "localhost:$port/q/health/ready" >/dev/null 2>&1; do
    kill -0 $pid 2>/dev/null || { echo "$label: the operator exited, see target/benchmark-idle-$label.log" >&2; return 1; }
    sleep 0.05 # the poll interval is the measurement's resolution
  done
  local ready=$(( ($(date +%s%N) - start) / 1000000 ))
  sleep 60
  local rss cpu
  rss=$(awk '/VmRSS/ {print int($2/1024)}' /proc/$pid/status)
  cpu=$(awk '{printf "%.1f", ($14+$15)/100}' /proc/$pid/stat)
  echo "$label nodes=$nodes ready=${ready}ms rss=${rss}MiB $(curl -s "localhost:$port/q/metrics" | heap_figures) cpu=${cpu}s load=$load_before→$(cut -d' ' -f1 /proc/loadavg)"
  kill $pid; sleep 10; kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
}

# Start-up time says little without the machine's load: the busiest processes (CPU over 2 s), before and after.
busiest() { top -b -n 2 -d 2 -w 200 | awk '/^top -/ {i++} i == 2 && $1 ~ /^[0-9]+$/ {printf "%s %s%%, ", $12, $9; if (++n == 5) exit}'; }
echo "machine: $(nproc) CPUs${operator_cpus:+ (control plane on CPU 0, operator on $operator_cpus)}, load $(cut -d' ' -f1-3 /proc/loadavg), busiest: $(busiest)"
[ -z "${BASELINE_APP:-}" ] || [ -f "$BASELINE_APP/quarkus-run.jar" ] || { echo "no quarkus-run.jar in BASELINE_APP=$BASELINE_APP" >&2; exit 1; }
for run in $(seq "$runs"); do
  measure old "-XX:MaxRAMPercentage=75" "" "$jar" "-XX:SharedArchiveFile=$archive"
  # Another build's classes are not the archive's: the baseline runs without it.
  [ -z "${BASELINE_APP:-}" ] || measure baseline "${BASELINE_OPTIONS:-$image_options}" "$image_arenas" "$BASELINE_APP/quarkus-run.jar"
  measure new "$image_options" "$image_arenas" "$jar" "-XX:SharedArchiveFile=$archive"
done
echo "machine: load $(cut -d' ' -f1-3 /proc/loadavg), busiest: $(busiest)"
