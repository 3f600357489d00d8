#!/usr/bin/env bash
# The test bed: a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler) with KWOK playing the kubelets, all built from Go modules because this kind of
# machine reaches package registries only. Binaries are cached outside the repository and reused.
#
#   hack/testbed.sh build [--real]          build (or reuse) every binary (--real: also kubelet, kube-proxy, kubeadm)
#   hack/testbed.sh up [--real] [NAME] [W]  start a cluster NAME with 1 control-plane + W worker nodes
#   hack/testbed.sh down [--real] [NAME]    stop and delete it
#   hack/testbed.sh env [NAME]              print KUBECONFIG/PATH exports for a shell
#   hack/testbed.sh operator-kubeconfig NAME FILE  write FILE: a kubeconfig signed in as the chart's ServiceAccount
#   hack/testbed.sh promtool               build (or reuse) promtool, print its path (alert rule tests)
#   hack/testbed.sh audit-log [NAME]       where the API audit log of a cluster started with TESTBED_AUDIT_POLICY is
#   hack/testbed.sh kubeconfig [NAME]      where the admin kubeconfig of a running cluster is
# K8S_VERSION picks the Kubernetes (default below; any k8s.io/kubernetes the Go module proxy serves, 1.29 and up
# run: docs/version-matrix.md); each version's binaries are built once and kept apart.
# --real: the control-plane node is a real kubeadm node on this machine (root, containerd, runc;
# see hack/lib/realnode.sh), the workers are KWOK nodes beside it; down restores the host.
# REAL_NODE_VERSION starts its kubelet at another version (built with `build-node`), to be upgraded;
# REAL_CONTROL_PLANE_VERSION the whole node (kubeadm init, control plane; built with `build-node --control-plane`).
#   hack/testbed.sh real-info               the real node's name, address, shell image
#   hack/testbed.sh real-import [OPT] ARCHIVE  import an image archive into the real node's containerd (OPT: ctr's)
#   hack/testbed.sh binaries-iso V [OMIT]   a CKS binaries ISO of Kubernetes V (OMIT: a file to leave out); prints its path
#   hack/testbed.sh host-state DIR          what the real node changes on a host, as files to compare
#                                           (down --real keeps the one from before in clusters/NAME-host-before)
#   hack/testbed.sh stop-component NAME C   kill one control-plane process (kube-apiserver, etcd, ...) as a crash would
#   hack/testbed.sh start-component NAME C  start it again with the command line it had
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
HELM_VERSION="${HELM_VERSION:-v4.3.2}"
# Helm 3 beside it: owners install with either, so the chart is installed and upgraded with both (ChartUpgradeIT).
HELM3_VERSION="${HELM3_VERSION:-v3.21.4}"
# crictl for the binaries ISOs' cri-tools/ (the newest cri-tools the Go module proxy serves at or below the bed's minor).
CRICTL_VERSION="${CRICTL_VERSION:-v1.34.0}"
# Prometheus 3.16's Go module (its versions are v0.3xx); only promtool is built, for `promtool test rules`.
PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-v0.316.0}"
CACHE_ROOT="${CKS_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cks-node-operator}"
BIN="$CACHE_ROOT/bin-k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
CLUSTERS="$CACHE_ROOT/clusters"

start_time=$(date +%s)
say() { printf '[testbed %4ss] %s\n' "$(( $(date +%s) - start_time ))" "$*" >&2; }

have() { [ -x "$BIN/$1" ]; }

# k8s.io/kubernetes cannot be built as a dependency as it is: its go.mod replaces its staging modules
# (k8s.io/api, k8s.io/client-go, ...) with ./staging/src/..., which a dependency does not have. The wrapper
# module replaces each with the published k8s.io/<name> v0.Y.Z instead. The set differs between minors
# (1.29 and 1.30 have legacy-cloud-providers, 1.31 adds cri-client, 1.32 externaljwt), so it is read from
# the go.mod of the version being built (`go list -m` fetches that file alone).
staging_modules() { # go.mod
  sed -n 's#^[[:space:]]*k8s.io/\([a-z0-9-]*\) => \./staging/src/k8s\.io/.*#\1#p' "$1"
}

# The published version a staging module is replaced with: v0.Y.Z itself, or, where the module proxy does not serve
# that one (a partial mirror may lack a few: k8s.io/endpointslice, kubectl, cli-runtime and metrics v0.32.13), the
# newest patch below it of the same minor that it serves; within a minor the staging modules' APIs stay compatible.
# The build says which, so a bed built so is never taken for an exact one.
staging_module_version() { # name v0.Y.Z
  local want=$2 found
  found=$(go list -m -versions "k8s.io/$1" 2>/dev/null | tr ' ' '\n' | grep "^${want%.*}\.[0-9]*$" |
    awk -F. -v patch="${want##*.}" '$3 <= patch { print $3, $0 }' | sort -n | tail -1 | cut -d' ' -f2) || true
  if [ -n "$found" ] && [ "$found" != "$want" ]; then
    say "k8s.io/$1 $want is not served by the module proxy; using $found"
    echo "$found"
  else
    echo "$want"
  fi
}

build_kubernetes() { # binaries (from k8s.io/kubernetes/cmd/)
  local need=()
  for b in "$@"; do have "$b" || need+=("$b"); done
  [ ${#need[@]} -eq 0 ] && return 0
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local staging_version="v0.${K8S_VERSION#v1.}"
  local dir="$CACHE_ROOT/src/kubernetes-$K8S_VERSION"
  mkdir -p "$dir"
  if [ ! -f "$dir/go.sum" ]; then
    local gomod staging=()
    gomod=$(go list -m -f '{{.GoMod}}' "k8s.io/kubernetes@$K8S_VERSION") || return 1
    mapfile -t staging < <(staging_modules "$gomod")
    [ ${#staging[@]} -gt 0 ] || { echo "testbed: no staging modules found in k8s.io/kubernetes $K8S_VERSION's go.mod" >&2; return 1; }
    say "resolving k8s.io/kubernetes $K8S_VERSION (a wrapper module replaces its ${#staging[@]} staging modules with published ones)"
    {
      echo "module cks-testbed/kubernetes"
      echo
      echo "go 1.25"
      echo
      # The wrapper is the main module, so its go.mod sets the binaries' GODEBUG defaults: those of the Go
      # the release was made for (its go line, 1.21 for 1.29), not of the newer Go building it here.
      echo "godebug default=go$(sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' "$gomod")"
      echo
      echo "require k8s.io/kubernetes $K8S_VERSION"
      echo
      echo "tool ("
      for b in "$@"; do echo "  k8s.io/kubernetes/cmd/$b"; done
      echo ")"
      echo
      echo "replace ("
      for m in "${staging[@]}"; do echo "  k8s.io/$m => k8s.io/$m $(staging_module_version "$m" "$staging_version")"; done
      echo ")"
    } > "$dir/go.mod"
    (cd "$dir" && go mod tidy) || { rm -f "$dir/go.sum"; return 1; }
  fi
  # A module resolved for fewer binaries (the real node adds kubelet, kube-proxy, kubeadm) grows
  # the tools it lacks, at the same version.
  for b in "${need[@]}"; do
    grep -q "k8s.io/kubernetes/cmd/$b\$" "$dir/go.mod" && continue
    say "adding k8s.io/kubernetes/cmd/$b to the wrapper module"
    (cd "$dir" && go get -tool "k8s.io/kubernetes/cmd/$b@$K8S_VERSION")
  done
  # Built by today's Go whatever the release: down to 1.29 no -ldflags=-checklinkname=0 is needed, as every
  # //go:linkname into the standard library in its dependencies (modern-go/reflect2, go.starlark.net, x/sys) is
  # one Go still allows.
  # Stamp the version so nodes and `kubectl version` do not report v0.0.0-master.
  local ld="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  for b in "${need[@]}"; do
    say "building $b $K8S_VERSION (cold builds take several minutes on 2 cores)"
    (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$BIN/$b.tmp" "k8s.io/kubernetes/cmd/$b")
    mv "$BIN/$b.tmp" "$BIN/$b"
  done
}

build_etcd() {
  have etcd && return 0
  local dir="$CACHE_ROOT/src/etcd-$ETCD_VERSION"
  mkdir -p "$dir"
  if [ ! -f "$dir/go.sum" ]; then
    say "resolving etcd $ETCD_VERSION"
    printf 'module cks-testbed/etcd\n\ngo 1.25\n\nrequire go.etcd.io/etcd/server/v3 %s\n\ntool go.etcd.io/etcd/server/v3\n' "$ETCD_VERSION" > "$dir/go.mod"
    (cd "$dir" && go mod tidy) || { rm -f "$dir/go.sum"; return 1; }
  fi
  say "building etcd $ETCD_VERSION"
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$BIN/etcd.tmp" "$BIN/etcd"
}

build_installable() { # name module-path version
  have "$1" && return 0
  say "building $1 $3"
  GOBIN="$BIN/.gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "$2@$3"
  mv "$BIN/.gobin/$1" "$BIN/$1"
}

# Helm is kept apart from the Kubernetes binaries, so that another Helm needs no new control plane: each
# version is built once into tools/helm-VERSION and linked into the bed's bin directory as helm or helm3.
helm_linked() { [ "$(readlink "$BIN/$1" 2>/dev/null)" = "$CACHE_ROOT/tools/helm-$3/helm" ]; }

link_helm() { # link-name module version
  helm_linked "$@" && return 0
  local dir="$CACHE_ROOT/tools/helm-$3"
  if [ ! -x "$dir/helm" ]; then
    say "building helm $3"
    mkdir -p "$dir"
    GOBIN="$dir/.gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "$2@$3"
    mv "$dir/.gobin/helm" "$dir/helm"
  fi
  ln -sfn "$dir/helm" "$BIN/$1"
}

# Test runs side by side may each find a binary missing: one builds while the others wait, then reuse it
# (two at once would write the same wrapper module and binaries). The lock is held for the build only.
with_build_lock() {
  mkdir -p "$CACHE_ROOT"
  ( flock 9 && "$@" ) 9>"$CACHE_ROOT/build.lock"
}

# A bed already built starts without the lock: another run may hold it for minutes building other binaries
# (a real node's older version), and every binary lands under its final name only once complete.
cmd_build() { bed_built || with_build_lock build_bed; }

bed_built() {
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwokctl; do have "$b" || return 1; done
  helm_linked helm helm.sh/helm/v4/cmd/helm "$HELM_VERSION" && helm_linked helm3 helm.sh/helm/v3/cmd/helm "$HELM3_VERSION"
}

build_bed() {
  command -v go >/dev/null || { echo "testbed: Go is needed to build the test bed (Go >= 1.24 with access to the Go module proxy)" >&2; exit 1; }
  mkdir -p "$BIN"
  if bed_built; then say "binaries cached in $BIN"; return 0; fi
  say "building the test bed into $BIN; a cold build takes 10-25 minutes, later runs reuse it"
  build_etcd
  build_installable kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION"
  build_installable kwokctl sigs.k8s.io/kwok/cmd/kwokctl "$KWOK_VERSION"
  link_helm helm helm.sh/helm/v4/cmd/helm "$HELM_VERSION"
  link_helm helm3 helm.sh/helm/v3/cmd/helm "$HELM3_VERSION"
  build_kubernetes kube-apiserver kube-controller-manager kube-scheduler kubectl
  say "done: $(ls "$BIN" | tr '\n' ' ')"
}

# promtool is built apart from the bed (only the alert tests need it), on first use.
cmd_promtool() {
  local dir="$CACHE_ROOT/tools/prometheus-$PROMETHEUS_VERSION"
  if [ ! -x "$dir/promtool" ]; then
    command -v go >/dev/null || { echo "testbed: Go is needed to build promtool" >&2; exit 1; }
    say "building promtool from github.com/prometheus/prometheus $PROMETHEUS_VERSION (a few minutes cold)"
    mkdir -p "$dir"
    GOBIN="$dir/.gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION" >&2
    mv "$dir/.gobin/promtool" "$dir/promtool"
  fi
  echo "$dir/promtool"
}

# Prints a node manifest from hack/kwok-node.yaml. role: control|node
node_manifest() { # name role version
  local role_labels="    node-role.kubernetes.io/worker: \"\"" taints="  taints: []"
  if [ "$2" = control ]; then
    role_labels="    node-role.kubernetes.io/control-plane: \"\""
    taints=$'  taints:\n  - key: node-role.kubernetes.io/control-plane\n    effect: NoSchedule'
  fi
  local template; template=$(grep -v "^#" "$(dirname "$0")/kwok-node.yaml")
  template=${template//__NAME__/$1}
  template=${template//__VERSION__/$3}
  template=${template//__ROLE_LABELS__/$role_labels}
  template=${template//__TAINTS__/$taints}
  printf '%s\n' "$template"
}

# A free port of this bed's own, away from where kwokctl looks: it hands out free ports from 32767
# down, so beds created at the same moment race for the same ports, and a bed created while this
# one's kube-apiserver or etcd is stopped (an outage test) takes the port that process comes back on.
OWN_PORTS=" "
own_port() {
  local port
  for _ in $(seq 1 100); do
    port=$(( 20000 + RANDOM % 10000 ))
    case "$OWN_PORTS" in *" $port "*) continue ;; esac
    ss -Hltn "sport = :$port" | grep -q . || { OWN_PORTS="$OWN_PORTS$port "; echo "$port"; return 0; }
  done
  echo "testbed: no free port between 20000 and 29999" >&2
  return 1
}

# N free ports for one bed. Beds created at the same moment (the forks of one IT run start theirs together)
# would see the same ports free, as none listens yet: the ports are picked under a lock and reserved for
# 5 minutes, and a bed picking ports skips those reserved.
reserve_ports() { # count
  mkdir -p "$CLUSTERS"
  (
    flock 8
    local file="$CLUSTERS/ports.reserved" now port i
    now=$(date +%s)
    touch "$file"
    awk -v now="$now" '$1 > now - 300' "$file" > "$file.tmp" && mv "$file.tmp" "$file"
    OWN_PORTS=" $(awk '{ printf "%s ", $2 }' "$file")"
    for i in $(seq 1 "$1"); do
      port=$(own_port) || exit 1
      OWN_PORTS="$OWN_PORTS$port "
      echo "$now $port" >> "$file"
      echo "$port"
    done
  ) 8>"$CLUSTERS/ports.lock"
}

cmd_up() { # name workers
  local name="${1:-cksbed}" workers="${2:-3}"
  cmd_build
  export PATH="$BIN:$PATH" KWOK_WORKDIR="$CLUSTERS" KWOK_KUBE_VERSION="$K8S_VERSION"
  local kubeconfig="$CLUSTERS/$name.kubeconfig"
  if kwokctl get clusters 2>/dev/null | grep -qx "$name"; then
    say "cluster $name exists; deleting it first so the test bed starts clean"
    kwokctl delete cluster --name "$name" --kubeconfig "$kubeconfig" >/dev/null 2>&1 || true
  fi
  local audit=() apis=() minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  [ -n "${TESTBED_AUDIT_POLICY:-}" ] && audit=(--kube-audit-policy "$TESTBED_AUDIT_POLICY")
  # The tests hold pods off a node with a ValidatingAdmissionPolicy (GA in 1.30). 1.28 and 1.29 have it as beta,
  # off by default: turned on there (the operator itself uses none).
  [ "$minor" -lt 30 ] && apis=(--kube-feature-gates ValidatingAdmissionPolicy=true --kube-runtime-config admissionregistration.k8s.io/v1beta1=true)
  say "starting cluster $name (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) $K8S_VERSION"
  # etcd's peer port has no flag, only the configuration (read from stdin): left to kwokctl, a bed created
  # while this one's etcd is stopped took it, and etcd could not start again (ScaleDownOutageIT, etcd case).
  local picked=() ports=() component peer
  mapfile -t picked < <(reserve_ports 6)
  [ ${#picked[@]} -eq 6 ] || exit 1
  for component in kube-apiserver etcd controller kube-controller-manager kube-scheduler; do
    ports+=("--$component-port" "${picked[${#ports[@]} / 2]}")
  done
  peer=${picked[5]}
  # Pod logs: the API server reaches KWOK's kubelet server (each node's kubeletEndpoint port) for pods/log, and KWOK
  # serves a pod's log from a file named by a Logs object (kwok.x-k8s.io/v1alpha1, one per pod: name and namespace
  # the pod's) in CRI log format. A pod without one has no log, as on every bed before (the request is refused with
  # "no logs found"). The ISO canary's verdict is its Job's log (NodeUpgradeIsoCanaryIT, ServedPodLog).
  printf 'apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokctlConfiguration\noptions:\n  etcdPeerPort: %s\n' "$peer" |
  kwokctl create cluster --config - --name "$name" --runtime binary --kubeconfig "$kubeconfig" "${ports[@]}" \
    --etcd-binary "$BIN/etcd" --kube-apiserver-binary "$BIN/kube-apiserver" \
    --kube-controller-manager-binary "$BIN/kube-controller-manager" \
    --kube-scheduler-binary "$BIN/kube-scheduler" --kwok-controller-binary "$BIN/kwok" \
    --enable-crds Logs "${audit[@]}" "${apis[@]}" --wait 2m >&2
  local hex
  {
    node_manifest "$name-control-$(printf '%010x' 0x18c2f3a800)" control "$K8S_VERSION"
    for i in $(seq 1 "$workers"); do
      echo "---"
      node_manifest "$name-node-$(printf '%010x' $(( 0x18c2f3a900 + i )))" node "$K8S_VERSION"
    done
  } | kubectl --kubeconfig "$kubeconfig" apply -f - >&2
  kubectl --kubeconfig "$kubeconfig" wait --for=condition=Ready node --all --timeout=120s >&2
  say "cluster $name is up: $(kubectl --kubeconfig "$kubeconfig" version -o json | grep -m1 gitVersion | tr -d ' ,')"
  echo "$kubeconfig"
}

# A kubeconfig signed in as the operator's pod is: the chart's ServiceAccount in cks-node-operator, by a
# token, with the chart's RBAC (and the CRDs, which the chart installs). The bed's admin kubeconfig holds a
# client certificate instead, whose PKCS#12 handling costs a JVM's start 0.1-0.2 s that a pod never pays.
cmd_operator_kubeconfig() { # name file
  local name="$1" file="$2" root
  root=$(cd "$(dirname "$0")/.." && pwd)
  export PATH="$BIN:$PATH" KUBECONFIG="$CLUSTERS/$name.kubeconfig"
  kubectl apply -f "$root/deploy/crds/" >/dev/null
  kubectl create namespace cks-node-operator >/dev/null 2>&1 || true
  helm template cks-node-operator "$root/deploy/helm/cks-node-operator" -n cks-node-operator \
    --kube-version "$K8S_VERSION" --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml | kubectl apply -f - >/dev/null
  local ca; ca=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  [ -n "$ca" ] || ca=$(base64 -w0 < "$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')")
  cat > "$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: bed
  cluster: {server: "$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')", certificate-authority-data: "$ca"}
users:
- name: cks-node-operator
  user: {token: "$(kubectl -n cks-node-operator create token cks-node-operator --duration 2h)"}
contexts:
- name: operator
  context: {cluster: bed, user: cks-node-operator, namespace: cks-node-operator}
current-context: operator
EOF
}

cmd_down() {
  local name="${1:-cksbed}"
  export PATH="$BIN:$PATH" KWOK_WORKDIR="$CLUSTERS"
  kwokctl delete cluster --name "$name" --kubeconfig "$CLUSTERS/$name.kubeconfig" >&2 || true
}

cmd_build_real() { with_build_lock build_real; }

build_real() {
  build_bed
  build_kubernetes kubelet kube-proxy kubeadm
}

# A node's binaries at K8S_VERSION alone, e.g. an older kubelet for the real node to be upgraded from;
# with --control-plane also the control plane's (a kubeadm node of an older minor, to be upgraded by
# `kubeadm upgrade apply`). etcd, kwok and helm stay the bed's own.
cmd_build_node() { with_build_lock build_node "$@"; }

build_node() {
  mkdir -p "$BIN"
  if [ "${1:-}" = --control-plane ]; then
    build_kubernetes kubelet kubeadm kube-proxy kube-apiserver kube-controller-manager kube-scheduler kubectl
  else
    build_kubernetes kubelet kubeadm kube-proxy
  fi
}

. "$(dirname "$0")/lib/oci.sh"
. "$(dirname "$0")/lib/realnode.sh"

# An outage of one control-plane process: SIGKILL (no graceful shutdown, as when it crashes or its
# host dies); its command line is kept so start-component brings the same process back.
cmd_stop_component() { # name component
  local dir="$CLUSTERS/clusters/$1" component="$2"
  local pidfile="$dir/pids/$component.pid"
  [ -f "$pidfile" ] || { echo "testbed: no $component in cluster $1 ($pidfile)" >&2; exit 1; }
  # Every running component's command line is kept: those that exit while this one is away are
  # started again by start-component, as a kubeadm node's kubelet restarts its static pods.
  local f p
  for f in "$dir"/pids/*.pid; do
    p=$(cat "$f")
    [ -r "/proc/$p/cmdline" ] && tr '\0' '\n' < "/proc/$p/cmdline" > "${f%.pid}.cmdline"
  done
  local pid; pid=$(cat "$pidfile")
  if [ -r "/proc/$pid/cmdline" ]; then
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  [ -s "$dir/pids/$component.cmdline" ] || { echo "testbed: $component of $1 was not running and was never stopped here" >&2; exit 1; }
  say "stopped $component of $1 (pid $pid)"
}

# Starts a component from its saved command line unless it runs.
start_saved() { # dir name component
  local dir="$1" name="$2" component="$3"
  local pidfile="$dir/pids/$component.pid" saved="$dir/pids/$component.cmdline"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then say "$component of $name is running"; return 0; fi
  [ -s "$saved" ] || { echo "testbed: no saved command line for $component of $name (stop it with stop-component first)" >&2; exit 1; }
  local cmd=(); mapfile -t cmd < "$saved"
  # Its own session and no inherited descriptors: it outlives this script, and nobody waits on its output.
  # The pid written is the component's own (exec), without a newline, as kwokctl writes it: its delete
  # parses the file with strconv.Atoi and kills that pid. Otherwise the process would outlive the bed.
  (cd "$dir" && exec setsid "${cmd[@]}" >> "$dir/logs/$component.log" 2>&1 < /dev/null) &
  printf '%s' "$!" > "$pidfile"
  say "started $component of $name again (pid $(cat "$pidfile"))"
}

cmd_start_component() { # name component
  local dir="$CLUSTERS/clusters/$1" component="$2"
  start_saved "$dir" "$1" "$component"
  # kube-controller-manager (and the scheduler) exit when they cannot reach the API server for their
  # leader election's renew deadline; on a kubeadm node the kubelet starts them again. So here.
  local f other
  for f in "$dir"/pids/*.cmdline; do
    other=$(basename "$f" .cmdline)
    [ "$other" = "$component" ] || start_saved "$dir" "$1" "$other"
  done
}

case "${1:-}" in
  build) if [ "${2:-}" = --real ]; then cmd_build_real; else cmd_build; fi ;;
  build-node) cmd_build_node "${2:-}" ;;
  real-info) real_info ;;
  real-import) shift; real_import "$@" ;;
  binaries-iso) real_binaries_iso "$2" "${3:-}" ;;
  host-state) real_host_state "$2" ;;
  bin) echo "$BIN" ;;
  up) shift
    if [ "${1:-}" = --real ]; then
      shift
      # A start that fails half-way restores the host at once.
      trap 'rc=$?; [ $rc = 0 ] || { say "the real node did not start (rc $rc); tearing it down"; real_down || true; }' EXIT
      real_up "${1:-cksbed}" "${2:-3}"
      trap - EXIT
    else
      # A bed that fails half-way (say, its nodes never Ready) is deleted at once: its processes would
      # otherwise outlive the run, as the caller has no bed to tear down.
      bed_name="${1:-cksbed}"
      trap 'rc=$?; [ $rc = 0 ] || { say "cluster $bed_name did not come up (rc $rc); deleting it"; cmd_down "$bed_name" || true; }' EXIT
      cmd_up "$@"
      trap - EXIT
    fi ;;
  down) shift; if [ "${1:-}" = --real ]; then real_down; else cmd_down "$@"; fi ;;
  audit-log) echo "$CLUSTERS/clusters/${2:-cksbed}/logs/audit.log" ;;
  kubeconfig) echo "$CLUSTERS/${2:-cksbed}.kubeconfig" ;;
  operator-kubeconfig) cmd_operator_kubeconfig "$2" "$3" ;;
  env) echo "export PATH=\"$BIN:\$PATH\" KUBECONFIG=\"$CLUSTERS/${2:-cksbed}.kubeconfig\"" ;;
  node-manifest) shift; node_manifest "$@" ;;
  promtool) cmd_promtool ;;
  stop-component) shift; cmd_stop_component "$@" ;;
  start-component) shift; cmd_start_component "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2 ;;
esac
