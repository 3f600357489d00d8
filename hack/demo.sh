#!/usr/bin/env bash
# The one-command demo. On a machine with a JDK 17 and Go, it builds what is missing (the operator,
# and on the first run the Kubernetes test bed from Go modules), starts a local CKS-like cluster
# (a real control plane with 1 control-plane and 3 worker KWOK nodes), a CloudStack simulator that
# knows the cluster's VMs, and the operator, then walks through:
#   1. a VMMapAudit finding drift between CloudStack's VM map and the nodes,
#   2. a ScaleDown blocked by a PodDisruptionBudget, rolled back,
#   3. the PDB relaxed and the ScaleDown succeeding (one scaleKubernetesCluster call),
#   4. a NodeUpgrade of the remaining nodes, one at a time.
# It stops everything at the end, or on Ctrl-C. Set TESTBED_KEEP=true to keep the cluster running.
set -euo pipefail
cd "$(dirname "$0")/.."
export TESTBED_CLUSTER="${TESTBED_CLUSTER:-cksdemo}"
echo "==> Building the operator and the demo (./mvnw package)"
./mvnw -B -q package -DskipTests
./mvnw -B -q dependency:build-classpath -Dmdep.outputFile=target/demo-classpath.txt -Dmdep.includeScope=test
hack/testbed.sh build
exec java -Djava.util.logging.manager=org.jboss.logmanager.LogManager -Dproject.root="$PWD" -cp "target/classes:target/test-classes:$(cat target/demo-classpath.txt)" \
  dev.cks.nodeops.demo.DemoWalkthrough
