# The test bed's real mode, sourced by hack/testbed.sh: a kubeadm control-plane node on this
# machine (containerd + runc + CNI bridge, a real kubelet, kube-proxy as a host process) with
# KWOK workers beside it, and a teardown that leaves the host as it was.
#
# One real node per machine (kubeadm owns /etc/kubernetes and port 6443). Everything the bed
# owns lives in $REAL; what it has to change elsewhere is recorded in $REAL/host-before before
# the first change and restored (and compared) by real_down. The node is laid out like a CKS node:
# kubeadm, kubelet and kubectl in /opt/bin, containerd on its default socket, a kubelet "unit"
# (a supervisor script, since this machine has no systemd) and a systemctl stand-in that drives it.
# /opt/bin/kubelet starts as a link to $REAL/bin/kubelet, which links to a per-version copy in
# $REAL/versions, so a test can relink it and restart the kubelet, as a package upgrade would; a
# CKS upgrade replaces /opt/bin's files from the binaries ISO (real_binaries_iso) instead.
#
# Needs root and the Debian packages in REAL_PACKAGES.

REAL="${CKS_REALNODE_STATE:-/var/lib/cks-node-operator-realnode}"
REAL_PACKAGES="containerd runc containernetworking-plugins iptables nftables iproute2 util-linux procps busybox-static xorriso fuseiso"
REAL_BRIDGE=cks0
REAL_NODE_IP=10.244.0.1     # the bridge's address: the API server, the kubelet and node port traffic stay on it
REAL_POD_CIDR=10.244.0.0/24
REAL_CLUSTER_CIDR=10.244.0.0/16
REAL_SERVICE_CIDR=10.96.0.0/12
# containerd's default address, as on a CKS node: CKS's upgrade script imports images with a plain `ctr`.
REAL_SOCK=/run/containerd/containerd.sock
# Where CKS installs kubeadm, kubelet and kubectl; its kubelet.service runs /opt/bin/kubelet.
REAL_OPT_BIN=/opt/bin
# Where CKS's scripts mount the binaries ISO.
REAL_ISO_MOUNT=/mnt/k8sdisk
# The systemctl stand-in: ahead of the host's (which cannot work without systemd as PID 1) on a root PATH.
REAL_SYSTEMCTL=/usr/local/bin/systemctl
# mount(8) hands a filesystem type to /sbin/mount.<type> when there is one. A kernel without ISO 9660
# (this machine's has none, and no modules) gets this one while the node is up: it mounts the ISO's
# device with FUSE (fuseiso), so the upgrade script's plain `mount -o ro DEVICE DIR` works as on a VM.
REAL_MOUNT_ISO9660=/usr/sbin/mount.iso9660
# Binaries ISOs (real_binaries_iso), kept between runs like the binaries they hold.
REAL_ISOS="$CACHE_ROOT/isos"
PAUSE_IMAGE=registry.k8s.io/pause:3.10.1
REAL_BUSYBOX=cks-realnode/busybox
# Paths kubeadm, the kubelet, CKS's node layout and the upgrade script (blkid's cache) use at fixed places; removed at teardown unless they existed before.
REAL_HOST_PATHS="/var/lib/cks-node-operator /etc/kubernetes /var/lib/kubelet /var/lib/etcd /var/lib/cni /var/log/pods /var/log/containers /run/netns /var/run/netns /etc/cni /opt/cni $REAL_OPT_BIN $REAL_ISO_MOUNT $REAL_SYSTEMCTL $REAL_MOUNT_ISO9660 $(dirname "$REAL_SOCK") $REAL_SOCK $REAL_SOCK.ttrpc /run/blkid"
# Sysctls the kernel changes by itself, not the bed.
REAL_VOLATILE_SYSCTLS='^(kernel\.random\.|kernel\.ns_last_pid|kernel\.pty\.nr|kernel\.perf_event_max_sample_rate|kernel\.tainted|fs\.(dentry-state|file-nr|inode-nr|inode-state|aio-nr|quota\.)|net\.netfilter\.nf_conntrack_count|net\.ipv6\.conf\.[^.]*\.stable_secret)'

real_ctr() { ctr --address "$REAL_SOCK" -n k8s.io "$@"; }

real_check_host() {
  [ "$(id -u)" = 0 ] || { echo "testbed: the real node needs root (it runs containerd, a kubelet and kubeadm)" >&2; exit 1; }
  local missing=()
  for tool in containerd runc ctr iptables-save iptables-restore nft ip mount findmnt losetup sysctl busybox; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] || missing+=(/usr/lib/cni/bridge)
  grep -qw iso9660 /proc/filesystems || command -v fuseiso >/dev/null || missing+=(fuseiso)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "testbed: the real node needs ${missing[*]}: apt-get install $REAL_PACKAGES" >&2
    exit 1
  fi
}

# What the bed may change on the host, in a form two snapshots can be compared with diff. The
# last file written is "complete": a teardown restores nothing from a snapshot without it.
real_host_state() { # dir
  mkdir -p "$1"
  { sysctl -a 2>/dev/null || true; } | { grep -vE "$REAL_VOLATILE_SYSCTLS" || true; } | LC_ALL=C sort > "$1/sysctl"
  iptables-save > "$1/iptables.v4" 2>/dev/null || true
  ip6tables-save > "$1/iptables.v6" 2>/dev/null || true
  cat "$1/iptables.v4" "$1/iptables.v6" | { grep -v '^#' || true; } | sed -E 's/ \[[0-9]+:[0-9]+\]$//' > "$1/iptables"
  { nft list tables 2>/dev/null || true; } | LC_ALL=C sort > "$1/nft-tables"
  awk '{print $5, $9}' /proc/self/mountinfo | LC_ALL=C sort > "$1/mounts"
  ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | LC_ALL=C sort > "$1/links"
  ip -o addr show | awk '{print $2, $4}' | LC_ALL=C sort > "$1/addresses"
  { losetup --list --noheadings -O NAME,BACK-FILE 2>/dev/null || true; } | LC_ALL=C sort > "$1/loop-devices"
  { find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d 2>/dev/null || true; } | LC_ALL=C sort > "$1/cgroups"
  local p pid cmd
  for p in $REAL_HOST_PATHS; do if [ -e "$p" ]; then echo "$p"; fi; done > "$1/paths"
  # Daemons of a real node: any process that runs from the bed's binaries or state, or a shim.
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    cmd=$(tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" || true)
    case "$cmd" in *"$REAL/"*|*containerd-shim*|*/kubelet\ *|fuseiso\ *) echo "${cmd:0:200}" ;; esac
  done | LC_ALL=C sort > "$1/daemons"
  touch "$1/complete"
}

# Prints the differences between the host now and the snapshot taken before the bed started.
real_host_diff() { # before-dir
  local now; now=$(mktemp -d)
  real_host_state "$now"
  local changed=0 f
  for f in sysctl iptables nft-tables mounts links addresses loop-devices cgroups paths daemons; do
    if ! diff -u "$1/$f" "$now/$f" > "$now/$f.diff"; then
      changed=1
      echo "--- $f differs from before the real node (- before, + now):"
      grep -E '^[-+][^-+]' "$now/$f.diff" | head -40
    fi
  done
  rm -rf "$now"
  return $changed
}

real_start() { # name logfile command... ; starts a daemon, records its PID in $REAL/pids
  local name=$1 log=$2; shift 2
  nohup "$@" >> "$log" 2>&1 < /dev/null &
  echo "$name $!" >> "$REAL/pids"
}

real_pid() { awk -v n="$1" '$1 == n {p=$2} END {print p}' "$REAL/pids" 2>/dev/null; }

real_stop() { # name
  local pid; pid=$(real_pid "$1")
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

# Images for the control plane and the pod sandbox: each binary on an empty base, tagged as kubeadm
# expects (kubeadm config images list), written as docker-archives OUT/<binary>.docker.tar.
real_control_plane_images() { # version bin-dir out-dir
  local version=$1 bin_dir=$2 out=$3 names stage ref bin
  mkdir -p "$out"
  names=$("$bin_dir/kubeadm" config images list --kubernetes-version "$version" 2>/dev/null)
  stage=$(mktemp -d)
  SOURCE_EPOCH=0
  for ref in $names; do
    case "$ref" in
      */kube-apiserver:*|*/kube-controller-manager:*|*/kube-scheduler:*) bin=${ref##*/}; bin=${bin%%:*} ;;
      */etcd:*) bin=etcd ;;
      */pause:*) bin=pause ;;
      *) continue ;;   # CoreDNS and kube-proxy: the bed runs without them (kube-proxy on the host)
    esac
    mkdir -p "$stage/$bin/usr/local/bin"
    if [ "$bin" = pause ]; then
      CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$stage/pause/pause" "$(dirname "$0")/realnode/pause.go"
      oci_image "$ref" "$out/$bin" "\"Entrypoint\":[\"/pause\"],\"User\":\"65535:65535\"" "$stage/$bin"
    else
      # etcd is the bed's own build at every Kubernetes version, under the tag that version's kubeadm expects.
      if [ "$bin" = etcd ]; then cp "$BIN/etcd" "$stage/$bin/usr/local/bin/etcd"; else cp "$bin_dir/$bin" "$stage/$bin/usr/local/bin/$bin"; fi
      oci_image "$ref" "$out/$bin" "\"Env\":[\"PATH=/usr/local/bin\"],\"Entrypoint\":[\"/usr/local/bin/$bin\"]" "$stage/$bin"
    fi
    echo "$ref" > "$out/$bin.ref"
    rm -f "$out/$bin.oci.tar"
  done
  rm -rf "$stage"
}

real_images() {
  local images="$REAL/images" stage
  real_control_plane_images "$REAL_CONTROL_PLANE_VERSION" "$CP_BIN" "$images"
  PAUSE_IMAGE=$(cat "$images/pause.ref")
  stage=$(mktemp -d)
  # A shell for test pods and the upgrade Jobs (sh, nsenter, sha256sum, cut): the host's static
  # busybox. Imported from its OCI archive, so the digest pods pin is the one written here.
  local version; version=$(busybox 2>&1 | sed -n '1s/^BusyBox v\([0-9.]*\).*/\1/p')
  mkdir -p "$stage/busybox/bin"
  cp "$(command -v busybox)" "$stage/busybox/bin/busybox"
  for applet in $(busybox --list); do [ "$applet" = busybox ] || ln -s busybox "$stage/busybox/bin/$applet"; done
  # This machine's PID 1 (the sandbox's own init) holds a capability root lacks, so even root may not
  # enter its namespaces: `nsenter -t 1` (how the operator's upgrade Jobs reach the host) is refused.
  # In this image nsenter stands the process playing kubelet.service in for PID 1: a root process in
  # the host's namespaces, as PID 1 is on a real node. Every other argument is passed on. The shell is
  # the host's dash, not busybox's, which would run its own nsenter applet without looking at PATH.
  rm "$stage/busybox/bin/nsenter" "$stage/busybox/bin/sh"
  cp "$(command -v dash)" "$stage/busybox/bin/sh"
  local lib
  for lib in $(ldd "$(command -v dash)" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
    mkdir -p "$stage/busybox$(dirname "$lib")"; cp -L "$lib" "$stage/busybox$lib"
  done
  cat > "$stage/busybox/bin/nsenter" <<'EOF_NSENTER'
#!/bin/sh
init=1
for p in /proc/[0-9]*; do
  case "$( { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null)" in *kubelet-service.sh*) init=${p#/proc/}; break ;; esac
done
n=$#; previous=""
for a in "$@"; do
  if [ "$previous" = -t ] && [ "$a" = 1 ]; then set -- "$@" "$init"; else set -- "$@" "$a"; fi
  previous=$a
done
shift "$n"
exec /bin/busybox nsenter "$@"
EOF_NSENTER
  chmod 755 "$stage/busybox/bin/nsenter"
  oci_image "$REAL_BUSYBOX:$version" "$images/busybox" "\"Env\":[\"PATH=/bin\"],\"Entrypoint\":[\"/bin/sh\"]" "$stage/busybox"
  echo "$REAL_BUSYBOX:$version@$(cat "$images/busybox.digest")" > "$images/busybox.ref"
  rm -f "$images/busybox.docker.tar"
  rm -rf "$stage"
}

# Imports an image archive (OCI or docker) into the node's containerd, as on an air-gapped node.
real_import() { real_ctr images import "$@" >&2; }

# What tests need to know about the running real node, as key=value lines.
real_info() {
  [ -f "$REAL/cluster" ] || { echo "testbed: no real node" >&2; exit 1; }
  echo "node=$(cat "$REAL/node")"
  echo "nodeIp=$REAL_NODE_IP"
  echo "shellImage=$(cat "$REAL/images/busybox.ref")"
  echo "stateDir=$REAL"
  echo "kubeletVersion=$(readlink "$REAL/bin/kubelet" | xargs dirname | xargs basename)"
  echo "controlPlaneVersion=$(cat "$REAL/control-plane-version")"
}

real_write_configs() { # name node
  local name=$1 node=$2
  mkdir -p "$REAL/containerd" "$REAL/cni/net.d" "$REAL/cni/ipam" "$REAL/etcd" "$REAL/bin" "$REAL/versions" "$(dirname "$REAL_SOCK")"
  # Each version's node binaries (copies: whatever writes through /opt/bin's links never reaches the
  # cache), and the ones the node runs: kubeadm, kube-proxy and kubectl of the control plane's
  # version, the kubelet of REAL_NODE_VERSION (an upgrade relinks it and restarts the kubelet).
  local version dir b
  for version in "$K8S_VERSION=$BIN" "$REAL_CONTROL_PLANE_VERSION=$CP_BIN" "$REAL_NODE_VERSION=$NODE_BIN"; do
    dir="$REAL/versions/${version%%=*}"
    mkdir -p "$dir"
    for b in kubelet kubeadm kube-proxy kubectl; do
      [ -e "$dir/$b" ] || [ ! -x "${version#*=}/$b" ] || cp "${version#*=}/$b" "$dir/$b"
    done
  done
  ln -sfn "$REAL/versions/$REAL_CONTROL_PLANE_VERSION/kubeadm" "$REAL/bin/kubeadm"
  ln -sfn "$REAL/versions/$REAL_CONTROL_PLANE_VERSION/kube-proxy" "$REAL/bin/kube-proxy"
  ln -sfn "$REAL/versions/$REAL_NODE_VERSION/kubelet" "$REAL/bin/kubelet"
  mkdir -p "$REAL_OPT_BIN"
  ln -sfn "$REAL/bin/kubelet" "$REAL_OPT_BIN/kubelet"
  ln -sfn "$REAL/bin/kubeadm" "$REAL_OPT_BIN/kubeadm"
  ln -sfn "$REAL/versions/$REAL_CONTROL_PLANE_VERSION/kubectl" "$REAL_OPT_BIN/kubectl"
  cat > "$REAL/containerd/config.toml" <<EOF
version = 2
root = "$REAL/containerd/root"
state = "$REAL/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$REAL_SOCK"
[ttrpc]
  address = "$REAL/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$REAL/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Root here lacks CAP_SYS_RESOURCE: runc cannot set the negative oom_score_adj sandboxes ask for.
  restrict_oom_score_adj = true
  netns_mounts_under = "$REAL/netns"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$REAL/cni/net.d"
EOF
  cat > "$REAL/cni/net.d/10-cks-realnode.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "cks-realnode", "plugins": [
  {"type": "bridge", "bridge": "$REAL_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$REAL/cni/ipam",
            "ranges": [[{"subnet": "$REAL_POD_CIDR", "gateway": "$REAL_NODE_IP"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
  cat > "$REAL/kubeadm.yaml" <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint: {advertiseAddress: $REAL_NODE_IP, bindPort: 6443}
nodeRegistration:
  name: $node
  criSocket: unix://$REAL_SOCK
  imagePullPolicy: Never
  ignorePreflightErrors: [all]
  kubeletExtraArgs:
    - {name: node-ip, value: $REAL_NODE_IP}
# No CoreDNS (nothing in the bed resolves names); kube-proxy runs on the host, not as a DaemonSet.
skipPhases: [addon/coredns, addon/kube-proxy]
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: $name
kubernetesVersion: $REAL_CONTROL_PLANE_VERSION
controlPlaneEndpoint: $REAL_NODE_IP:6443
networking: {podSubnet: $REAL_CLUSTER_CIDR, serviceSubnet: $REAL_SERVICE_CIDR}
etcd: {local: {dataDir: $REAL/etcd}}
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
# This kind of machine has cgroup v1 only.
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$REAL_SOCK
# Images cannot be pulled again here: never collect them; the disk is shared: evict late.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
EOF
  cat > "$REAL/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: /etc/kubernetes/admin.conf}
mode: iptables
clusterCIDR: $REAL_CLUSTER_CIDR
hostnameOverride: $node
bindAddress: $REAL_NODE_IP
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
# Leave the host's conntrack table size alone; no node ports on 127/8 (no route_localnet).
conntrack: {maxPerCore: 0, min: 0}
iptables: {localhostNodePorts: false}
EOF
  # Plays kubelet.service as CKS installs it (ExecStart=/opt/bin/kubelet with 10-kubeadm.conf's
  # arguments, Restart=always): while the unit is active and kubeadm's files are there, runs the
  # kubelet and starts it again when it ends. The systemctl stand-in below stops, starts and
  # restarts it through $REAL/kubelet.inactive and the kubelet's PID.
  cat > "$REAL/kubelet-service.sh" <<EOF
#!/bin/sh
while [ ! -f "$REAL/kubelet.stop" ]; do
  if [ ! -f "$REAL/kubelet.inactive" ] && [ -f /var/lib/kubelet/config.yaml ] && [ -f /var/lib/kubelet/kubeadm-flags.env ]; then
    . /var/lib/kubelet/kubeadm-flags.env
    $REAL_OPT_BIN/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \\
      --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml \$KUBELET_KUBEADM_ARGS &
    echo \$! > "$REAL/kubelet.pid"
    wait \$!
  fi
  sleep 1
done
EOF
  chmod +x "$REAL/kubelet-service.sh"
  # systemctl for the one unit this machine has (the host's own systemctl needs systemd as PID 1).
  # Every call is logged, so tests can tell what kubeadm and the upgrade script asked of it.
  sed "s|@REAL@|$REAL|g" > "$REAL/systemctl" <<'EOF'
#!/bin/sh
# The cks-node-operator test bed's stand-in for systemctl: only kubelet.service, played by @REAL@/kubelet-service.sh.
state=@REAL@
echo "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) systemctl $*" >> "$state/systemctl.log"
action=""; unit=""
for a in "$@"; do
  case "$a" in -*) ;; *) if [ -z "$action" ]; then action=$a; elif [ -z "$unit" ]; then unit=${a%.service}; fi ;; esac
done
running() { [ -f "$state/kubelet.pid" ] && kill -0 "$(cat "$state/kubelet.pid")" 2>/dev/null; }
active() { [ ! -f "$state/kubelet.inactive" ] && running; }
stop_kubelet() {
  touch "$state/kubelet.inactive"
  running || return 0
  pid=$(cat "$state/kubelet.pid"); kill "$pid" 2>/dev/null
  for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
}
# Like starting a Type=simple unit: back once the new process runs (when kubeadm's files are there).
start_kubelet() {
  old=$(cat "$state/kubelet.pid" 2>/dev/null)
  rm -f "$state/kubelet.inactive"
  [ -f /var/lib/kubelet/config.yaml ] || return 0
  for _ in $(seq 1 50); do
    if running && [ "$(cat "$state/kubelet.pid")" != "$old" ]; then return 0; fi
    sleep 0.1
  done
}
[ "$action" = daemon-reload ] && exit 0
if [ "$unit" != kubelet ]; then
  echo "systemctl (test bed stand-in): unit ${unit:-?} not found; only kubelet.service exists here" >&2
  exit 5
fi
case "$action" in
  enable|disable|reenable) ;;
  start) active || start_kubelet ;;
  stop) stop_kubelet ;;
  restart|try-restart|reload-or-restart) stop_kubelet; start_kubelet ;;
  is-enabled) echo enabled ;;
  is-active) if active; then echo active; else echo inactive; exit 3; fi ;;
  status)
    echo "* kubelet.service - kubelet: The Kubernetes Node Agent"
    echo "     Loaded: loaded (/etc/systemd/system/kubelet.service; enabled)"
    if active; then echo "     Active: active (running)"; else echo "     Active: inactive (dead)"; exit 3; fi ;;
  *) echo "systemctl (test bed stand-in): $action is not supported" >&2; exit 1 ;;
esac
EOF
  chmod 755 "$REAL/systemctl"
  # KWOK's default stages (no KwokConfiguration: kwok's defaults), as kwokctl configures them, from the module go install fetched.
  local stages; stages="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage"
  {
    for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
        pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
      echo "---"; cat "$stages/$f.yaml"
    done
  } > "$REAL/kwok.yaml"
}

# The versions the node starts at, and where their binaries are (built when missing):
# REAL_CONTROL_PLANE_VERSION (default: the bed's) for kubeadm, the control plane and kube-proxy,
# REAL_NODE_VERSION (default: the control plane's) for the kubelet.
real_versions() {
  REAL_CONTROL_PLANE_VERSION="${REAL_CONTROL_PLANE_VERSION:-$K8S_VERSION}"
  REAL_NODE_VERSION="${REAL_NODE_VERSION:-$REAL_CONTROL_PLANE_VERSION}"
  CP_BIN=$BIN
  if [ "$REAL_CONTROL_PLANE_VERSION" != "$K8S_VERSION" ]; then
    say "the control plane starts at $REAL_CONTROL_PLANE_VERSION"
    K8S_VERSION=$REAL_CONTROL_PLANE_VERSION "$0" build-node --control-plane >&2
    CP_BIN=$(K8S_VERSION=$REAL_CONTROL_PLANE_VERSION "$0" bin)
  fi
  NODE_BIN=$CP_BIN
  if [ "$REAL_NODE_VERSION" != "$REAL_CONTROL_PLANE_VERSION" ]; then
    say "the node's kubelet starts at $REAL_NODE_VERSION"
    K8S_VERSION=$REAL_NODE_VERSION "$0" build-node >&2
    NODE_BIN=$(K8S_VERSION=$REAL_NODE_VERSION "$0" bin)
  fi
}

real_up() { # name workers
  local name=$1 workers=$2
  real_check_host
  if [ -d "$REAL" ]; then
    say "a real node from an earlier run is still there; tearing it down first"
    real_down || { echo "testbed: the earlier real node's teardown left differences (above); fix them before starting again" >&2; exit 1; }
  fi
  cmd_build_real
  real_versions
  export PATH="$BIN:$PATH"
  mkdir -p "$REAL" "$CLUSTERS"
  say "recording the host's state (sysctls, iptables, mounts, links, loop devices, cgroups, paths, daemons)"
  real_host_state "$REAL/host-before"
  echo "$name" > "$REAL/cluster"
  local node="$name-control-$(printf '%010x' 0x18c2f3a800)"
  echo "$node" > "$REAL/node"
  echo "$REAL_CONTROL_PLANE_VERSION" > "$REAL/control-plane-version"
  say "building the control-plane and pause images"
  real_images
  real_write_configs "$name" "$node"

  say "bridge $REAL_BRIDGE $REAL_NODE_IP, containerd"
  ip link add "$REAL_BRIDGE" type bridge
  ip addr add "$REAL_NODE_IP/24" dev "$REAL_BRIDGE"
  ip link set "$REAL_BRIDGE" up
  real_start containerd "$REAL/containerd.log" containerd --config "$REAL/containerd/config.toml"
  for _ in $(seq 1 100); do real_ctr version >/dev/null 2>&1 && break; sleep 0.2; done
  local image
  for image in "$REAL"/images/*.docker.tar "$REAL"/images/busybox.oci.tar; do real_ctr images import "$image" >/dev/null; done
  # A pull records an image under its digest too; an import does not. Pods that pin the shell image by
  # digest (imagePullPolicy IfNotPresent) find it only under that name.
  local shell; shell=$(cat "$REAL/images/busybox.ref")
  real_ctr images tag "$(oci_full_name "${shell%%:*}"):$(echo "${shell#*:}" | cut -d@ -f1)" "$(oci_full_name "${shell%%:*}")@${shell#*@}" >/dev/null

  say "kubeadm init $node ($REAL_CONTROL_PLANE_VERSION)"
  cp "$REAL/systemctl" "$REAL_SYSTEMCTL"
  if ! grep -qw iso9660 /proc/filesystems && [ ! -e "$REAL_MOUNT_ISO9660" ]; then
    printf '#!/bin/sh\n# The cks-node-operator test bed: this kernel cannot mount ISO 9660; FUSE reads it instead.\nexec fuseiso "$1" "$2"\n' > "$REAL_MOUNT_ISO9660"
    chmod 755 "$REAL_MOUNT_ISO9660"
  fi
  real_start kubelet-service "$REAL/kubelet.log" "$REAL/kubelet-service.sh"
  "$REAL/bin/kubeadm" init --config "$REAL/kubeadm.yaml" > "$REAL/kubeadm-init.log" 2>&1 \
    || { tail -30 "$REAL/kubeadm-init.log" >&2; return 1; }
  # The node's settings for kubeadm's upgrades, which the upgrade script passes on (kubeadm keeps
  # none in the cluster): the checks this node cannot pass — cgroup v1 (SystemVerification; the
  # kubelet runs with failCgroupV1: false) and no CoreDNS to migrate.
  cat > /etc/kubernetes/kubeadm-upgrade.yaml <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: UpgradeConfiguration
apply:
  ignorePreflightErrors: [SystemVerification, CoreDNSUnsupportedPlugins, CoreDNSMigration]
node:
  ignorePreflightErrors: [SystemVerification]
EOF
  local kubeconfig="$CLUSTERS/$name.kubeconfig"
  cp /etc/kubernetes/admin.conf "$kubeconfig"
  real_start kube-proxy "$REAL/kube-proxy.log" "$REAL/bin/kube-proxy" --config "$REAL/kube-proxy.yaml"
  real_start kwok "$REAL/kwok.log" "$BIN/kwok" --kubeconfig /etc/kubernetes/admin.conf --config "$REAL/kwok.yaml" \
    --manage-all-nodes=false --manage-nodes-with-label-selector=type=kwok --node-lease-duration-seconds=40
  kubectl --kubeconfig "$kubeconfig" wait --for=condition=Ready "node/$node" --timeout=120s >&2
  # Named and labelled like a CKS control node (the kubelet may not set role labels itself).
  kubectl --kubeconfig "$kubeconfig" label node "$node" node-role.kubernetes.io/control-plane= --overwrite >/dev/null
  {
    for i in $(seq 1 "$workers"); do
      echo "---"
      node_manifest "$name-node-$(printf '%010x' $(( 0x18c2f3a900 + i )))" node "$REAL_CONTROL_PLANE_VERSION"
    done
  } | { [ "$workers" -gt 0 ] && kubectl --kubeconfig "$kubeconfig" apply -f - >&2 || cat >/dev/null; }
  kubectl --kubeconfig "$kubeconfig" wait --for=condition=Ready node --all --timeout=120s >&2
  say "real node $node is up (kubeadm $REAL_CONTROL_PLANE_VERSION, containerd, kubelet $REAL_NODE_VERSION) with $workers KWOK workers"
  echo "$kubeconfig"
}

# Tears the real node down and restores the host; fails (listing them) when differences remain.
real_down() {
  [ -d "$REAL" ] || { say "no real node"; return 0; }
  [ -f "$REAL/host-before/complete" ] || {
    echo "testbed: $REAL/host-before is incomplete, so nothing is restored from it; remove $REAL by hand after checking the host" >&2
    return 1; }
  export PATH="$BIN:$PATH"
  say "stopping kwok, kube-proxy and the kubelet"
  real_stop kwok
  real_stop kube-proxy
  touch "$REAL/kubelet.stop"
  real_stop kubelet-service
  [ -f "$REAL/kubelet.pid" ] && { kill "$(cat "$REAL/kubelet.pid")" 2>/dev/null || true; }
  if [ -S "$REAL_SOCK" ] && [ -x "$REAL/bin/kubeadm" ]; then
    say "kubeadm reset"
    "$REAL/bin/kubeadm" reset -f --cri-socket "unix://$REAL_SOCK" > "$REAL/kubeadm-reset.log" 2>&1 || true
    # Whatever kubeadm left (pods of KWOK-less namespaces, sandboxes): stop and remove every task and container.
    local c
    for c in $(real_ctr tasks list -q 2>/dev/null); do real_ctr tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true; done
    sleep 1
    for c in $(real_ctr tasks list -q 2>/dev/null); do real_ctr tasks delete -f "$c" >/dev/null 2>&1 || true; done
    for c in $(real_ctr containers list -q 2>/dev/null); do real_ctr containers delete "$c" >/dev/null 2>&1 || true; done
  fi
  [ -x "$REAL/bin/kube-proxy" ] && "$REAL/bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
  real_stop containerd
  # Shims outlive containerd: end the ones that serve this containerd (their command line names its socket).
  local pid
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    case "$(tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" || true)" in
      *containerd-shim*" -address $REAL_SOCK "*) kill -9 "$pid" 2>/dev/null || true ;;
    esac
  done
  say "unmounting and restoring the host"
  local mp
  for mp in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^($REAL/|/var/lib/kubelet|/run/netns/|/var/run/netns/|$REAL_ISO_MOUNT\$)" | LC_ALL=C sort -r); do
    umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || true
  done
  # FUSE daemons of ISO mounts (they end with their mount; one whose mount is gone is ended here).
  for pid in $(pgrep -x fuseiso 2>/dev/null); do
    case "$(tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" || true)" in *" $REAL_ISO_MOUNT "*) kill "$pid" 2>/dev/null || true ;; esac
  done
  # Binaries ISOs still attached (a test that stopped between attachIso and detachIso).
  local dev
  for dev in $(losetup --list --noheadings -O NAME,BACK-FILE 2>/dev/null | awk -v isos="$REAL_ISOS/" 'index($2, isos) == 1 {print $1}'); do
    losetup -d "$dev" 2>/dev/null || true
  done
  # Only the bed's own links: its bridge and the pods' veths (which go with their namespaces).
  local link
  for link in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^($REAL_BRIDGE|veth[0-9a-f]+)\$"); do
    grep -qx "$link" "$REAL/host-before/links" || ip link delete "$link" 2>/dev/null || true
  done
  real_restore_netfilter
  real_restore_sysctls
  local cg
  for cg in $(find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d -name kubepods 2>/dev/null); do
    find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  local p
  for p in $REAL_HOST_PATHS; do
    grep -qx "$p" "$REAL/host-before/paths" 2>/dev/null || rm -rf "$p"
  done
  local cluster; cluster=$(cat "$REAL/cluster" 2>/dev/null || echo real)
  # The daemons' logs outlive the node, for a test that failed.
  rm -rf "$CLUSTERS/$cluster-logs"; mkdir -p "$CLUSTERS/$cluster-logs"
  cp "$REAL"/*.log "$CLUSTERS/$cluster-logs/" 2>/dev/null || true
  rm -rf "$CLUSTERS/$cluster-host-before"; cp -r "$REAL/host-before" "$CLUSTERS/$cluster-host-before"
  if real_host_diff "$REAL/host-before" > "$CLUSTERS/$cluster.teardown"; then
    say "the host is as it was before the real node"
    rm -rf "$REAL"
    return 0
  fi
  cat "$CLUSTERS/$cluster.teardown" >&2
  echo "testbed: the host differs from before the real node (above; kept in $REAL for a second teardown)" >&2
  return 1
}

real_restore_netfilter() {
  local before="$REAL/host-before" family table
  # Tables the node created (kubelet, kube-proxy): delete them whole; then the rules of the others.
  while read -r family table; do
    grep -qx "table $family $table" "$before/nft-tables" || nft delete table "$family" "$table" 2>/dev/null || true
  done < <(nft list tables 2>/dev/null | awk '{print $2, $3}')
  [ -s "$before/iptables.v4" ] && iptables-restore < "$before/iptables.v4" 2>/dev/null || true
  [ -s "$before/iptables.v6" ] && ip6tables-restore < "$before/iptables.v6" 2>/dev/null || true
}

# Writes back every sysctl whose value differs from before (the kubelet's kernel flags, ip_forward, ...).
real_restore_sysctls() {
  local line
  while IFS= read -r line; do
    sysctl -q -w "${line%% = *}=${line#* = }" >/dev/null 2>&1 || true
  done < <(comm -23 "$REAL/host-before/sysctl" <(sysctl -a 2>/dev/null | grep -vE "$REAL_VOLATILE_SYSCTLS" | LC_ALL=C sort))
}

# A CKS binaries ISO for VERSION, laid out as Apache CloudStack's
# scripts/util/create-kubernetes-binaries-iso.sh lays it out (what addKubernetesSupportedVersion
# registers and attachIso gives a node): k8s/ kubeadm, kubelet, kubectl; docker/ one archive per
# image `kubeadm config images list` names, as <name:tag>.tar; cni/ the CNI plugins; cri-tools/
# crictl; kubelet.service and 10-kubeadm.conf with /opt/bin; network.yaml and dashboard.yaml.
# Built offline: the binaries from the Go module proxy (build-node --control-plane), the images
# from them (real_control_plane_images), CNI from Debian; then `mkisofs -J -R -l`, here xorriso's.
# The bed's cluster runs no CoreDNS and no kube-proxy DaemonSet and needs no CNI or dashboard (a
# bridge CNI on the host): the addon manifests hold one ConfigMap each in kube-system instead, named
# for the file and carrying the ISO's version, harmless and observable once the node script applies
# them. Both headlamp.yaml and dashboard.yaml are there, as on an ISO built for either, so a run shows
# which one the script chose. The ISO's file name carries a digest of the manifests: an ISO built
# before they changed is not used.
# OMIT (e.g. k8s/kubeadm) leaves one file out, for a test of a broken ISO. Prints the ISO's path.
real_binaries_iso() { # version [omit]
  local version=$1 omit=${2:-} bin out stage image ref addon addons_key
  command -v xorriso >/dev/null || { echo "testbed: a binaries ISO needs xorriso: apt-get install xorriso" >&2; exit 1; }
  bin=$(K8S_VERSION=$version "$0" bin)
  if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kubelet" ] || [ ! -x "$bin/kubectl" ]; then
    K8S_VERSION=$version "$0" build-node --control-plane >&2
  fi
  addons_key=$(for addon in network headlamp dashboard; do real_addon_manifest "$addon" "$version"; done | sha256sum | cut -c1-8)
  out="$REAL_ISOS/setup-$version-addons-$addons_key${omit:+-without-${omit//\//-}}.iso"
  if [ -f "$out" ]; then echo "$out"; return 0; fi
  say "building the binaries ISO of $version${omit:+ without $omit}"
  mkdir -p "$REAL_ISOS"
  stage=$(mktemp -d)
  mkdir -p "$stage/iso/k8s" "$stage/iso/docker" "$stage/iso/cni" "$stage/iso/cri-tools"
  # Not executable, as on CloudStack's ISOs: its script downloads them with curl (0644) and gives
  # kubeadm back the permissions it was downloaded with; the node script makes them executable.
  for b in kubeadm kubelet kubectl; do install -m 0644 "$bin/$b" "$stage/iso/k8s/$b"; done
  real_control_plane_images "$version" "$bin" "$stage/images"
  for image in "$stage"/images/*.docker.tar; do
    ref=$(cat "${image%.docker.tar}.ref")
    mv "$image" "$stage/iso/docker/${ref##*/}.tar"
  done
  tar -C /usr/lib/cni -czf "$stage/iso/cni/cni-plugins-amd64.tgz" .
  tar -C "$(dirname "$(real_crictl)")" -czf "$stage/iso/cri-tools/crictl-linux-amd64.tar.gz" crictl
  cat > "$stage/iso/kubelet.service" <<'EOF'
[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/opt/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
EOF
  cat > "$stage/iso/10-kubeadm.conf" <<'EOF'
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/opt/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
EOF
  for addon in network headlamp dashboard; do real_addon_manifest "$addon" "$version" > "$stage/iso/$addon.yaml"; done
  [ -z "$omit" ] || rm -f "$stage/iso/$omit"
  xorriso -as mkisofs -quiet -o "$out.tmp" -J -R -l "$stage/iso" >&2
  mv "$out.tmp" "$out"
  rm -rf "$stage"
  say "$out: $(du -h "$out" | cut -f1)"
  echo "$out"
}

# The bed ISO's stand-in for a CKS addon manifest (network.yaml, headlamp.yaml, dashboard.yaml).
real_addon_manifest() { # addon version
  cat <<EOF
# The test bed's stand-in for the CKS ISO's $1.yaml: one ConfigMap the node script's kubectl apply leaves behind.
apiVersion: v1
kind: ConfigMap
metadata:
  name: cks-bed-addon-$1
  namespace: kube-system
data:
  manifest: $1.yaml
  isoVersion: "$2"
EOF
}

# crictl for the ISO's cri-tools/, built once from its Go module.
real_crictl() {
  local dir="$CACHE_ROOT/tools/crictl-$CRICTL_VERSION"
  if [ ! -x "$dir/crictl" ]; then
    say "building crictl $CRICTL_VERSION"
    mkdir -p "$dir"
    GOBIN="$dir/.gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION" >&2
    mv "$dir/.gobin/crictl" "$dir/crictl"
  fi
  echo "$dir/crictl"
}
