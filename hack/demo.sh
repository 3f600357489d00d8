#!/usr/bin/env bash
# The one-command demo: builds what is missing, starts a local CKS-like cluster (real control
# plane + KWOK nodes), installs the CRDs and runs the operator against it.
#   hack/demo.sh            run the demo; Ctrl-C stops everything
set -euo pipefail
cd "$(dirname "$0")/.."
CLUSTER=cksdemo
say() { printf '\n==> %s\n' "$*"; }
cleanup() {
  say "stopping the operator and the cluster"
  [ -n "${OPERATOR_PID:-}" ] && kill "$OPERATOR_PID" 2>/dev/null && wait "$OPERATOR_PID" 2>/dev/null || true
  hack/testbed.sh down "$CLUSTER" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "building the operator (./mvnw package)"
./mvnw -B -q package -DskipTests
say "starting a cluster with 1 control-plane node and 3 workers (the first run builds Kubernetes from Go modules: 10-25 minutes)"
KUBECONFIG=$(hack/testbed.sh up "$CLUSTER" 3 | tail -1)
export KUBECONFIG PATH="$(hack/testbed.sh bin):$PATH"
kubectl get nodes
say "installing the CRDs"
kubectl apply -f deploy/crds/
mkdir -p target
say "starting the operator (log: target/demo-operator.log)"
java -Dquarkus.http.port=0 -jar target/quarkus-app/quarkus-run.jar > target/demo-operator.log 2>&1 &
OPERATOR_PID=$!
say "applying the samples in config/samples"
kubectl apply -f config/samples/
for _ in $(seq 1 30); do
  [ -n "$(kubectl get nu,sd,vma -o jsonpath='{.items[*].status.observedGeneration}')" ] && break
  sleep 1
done
kubectl get nu,sd,vma
say "done"
