#!/bin/sh
# Licensed under the Apache License, Version 2.0; derived from Apache CloudStack's
# plugins/integrations/kubernetes-service/src/main/resources/script/upgrade-kubernetes.sh (Copyright The Apache Software Foundation). See NOTICE.
#
# The node upgrade of CloudStack Kubernetes Service (CKS), as the operator runs it on each node.
# CloudStack copies its own upgrade-kubernetes.sh to a node only during its own upgrade, so the
# operator ships this copy (ConfigMap cks-node-operator-upgrade-script) and runs it in the host's
# namespaces after attaching the version's binaries ISO to the node's VM.
#
# Usage: upgrade-kubernetes.sh <version> <isFirstControl> <isOld> <ejectIso> [applyAddons]
#   version         e.g. 1.33.4
#   isFirstControl  true on the first control-plane node: `kubeadm upgrade apply`; else `kubeadm upgrade node`
#   isOld           true for clusters set up before kubeadm had `upgrade node` (< 1.15): `upgrade node config`
#   ejectIso        true to eject the ISO from the guest when done (the operator detaches it through the API)
#   applyAddons     ours, not CKS's: false leaves the ISO's addon manifests alone (spec.executor.cloudStackIso.applyAddons); default true
#
# Where it differs from CKS's script, and why:
# - it fails (and says why) when no binaries ISO is found, where CKS's goes on without one and ends 0;
# - images go to containerd's k8s.io namespace, the one the kubelet and kubeadm use (CKS's `ctr image
#   import` uses ctr's default namespace, so on an offline node kubeadm cannot find them);
# - `kubeadm upgrade apply` runs once: CKS's runs it a second time with CoreDNSUnsupportedPlugins
#   ignored after any failure, so a failed apply could be half-repeated with a check switched off;
# - the ISO's addon manifests are applied with the control plane's own kubeconfig
#   (/etc/kubernetes/admin.conf, which kubeadm writes on every control-plane node), where CKS's runs a
#   bare `kubectl` and relies on the node's root kubeconfig; each is tried again while the API server
#   restarts under the new kubelet, and its outcome is printed as a line `cks-addon <file> <outcome>`
#   that the operator reads from the Job's log into the node's status (docs/upgrade.md, "Addons").
#   A failed apply does not fail the script: kubeadm and the kubelet are upgraded by then.
#
# Addons, on the first control-plane node only, after the kubelet runs the new version (as CKS's):
# - network.yaml (the CNI) whenever the ISO carries it: every revision of Apache CloudStack's script
#   read for this (docs/upgrade.md, "Addons") applies it on the main control node unconditionally;
# - headlamp.yaml where the ISO carries one, else dashboard.yaml: newer CloudStack builds ISOs with
#   Headlamp in place of the retired Kubernetes Dashboard (apache/cloudstack#12776), so whichever
#   dashboard the ISO carries is the one its cluster runs. An ISO without either is reported, not an error.
set -eu

# The script runs with the Job container's environment: PATH is the image's, not the host's.
# /opt/bin first: that is where CKS installs kubeadm, kubelet and kubectl.
PATH=/opt/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

VERSION="${1:?version}"
VERSION="${VERSION#v}"
IS_FIRST_CONTROL="${2:-false}"
IS_OLD="${3:-false}"
EJECT_ISO="${4:-false}"
APPLY_ADDONS="${5:-true}"
MOUNT_DIR=/mnt/k8sdisk
BIN_DIR=/opt/bin
# As CKS's script: wait up to 10 × 5 s for the ISO to show up in the guest.
ISO_ATTEMPTS=10
ISO_ATTEMPT_SLEEP=5

log() { echo "$(date -u +%H:%M:%S) $*"; }

# A mount left by an earlier run that was killed holds whatever ISO was attached then (or nothing,
# once that ISO was detached): not used. Read from mountinfo, since a dead mount cannot be stat'ed.
if awk -v dir="$MOUNT_DIR" '$5 == dir {found = 1} END {exit !found}' /proc/self/mountinfo; then
  log "unmounting $MOUNT_DIR, left mounted by an earlier run"
  umount "$MOUNT_DIR" || umount -l "$MOUNT_DIR"
fi

# CloudStack attaches the ISO as the VM's CD-ROM. As CKS's script does, look at every device with
# an ISO 9660 filesystem and keep the first one that holds the binaries. blkid reads the devices
# themselves (-c /dev/null): its cache can name a device that has gone or holds another ISO now.
device=""
attempt=1
mkdir -p "$MOUNT_DIR"
while [ -z "$device" ]; do
  for candidate in $(blkid -c /dev/null -o device -t TYPE=iso9660 2>/dev/null || true); do
    if mount -o ro "$candidate" "$MOUNT_DIR" 2>/dev/null; then
      if [ -d "$MOUNT_DIR/k8s" ]; then device=$candidate; break; fi
      umount "$MOUNT_DIR"
    fi
  done
  [ -z "$device" ] || break
  if [ "$attempt" -ge "$ISO_ATTEMPTS" ]; then
    rmdir "$MOUNT_DIR" 2>/dev/null || true
    echo "no binaries ISO found: no device with an ISO 9660 filesystem holding k8s/ after $ISO_ATTEMPTS attempts; is the version's ISO attached to this node's VM?" >&2
    exit 2
  fi
  log "waiting for the binaries ISO (attempt $attempt of $ISO_ATTEMPTS)"
  sleep "$ISO_ATTEMPT_SLEEP"
  attempt=$((attempt + 1))
done
log "mounted $device on $MOUNT_DIR"
cleanup() {
  umount "$MOUNT_DIR" 2>/dev/null && rmdir "$MOUNT_DIR" 2>/dev/null || true
  if [ "$EJECT_ISO" = true ]; then eject "$device" 2>/dev/null || true; fi
}
trap cleanup EXIT

# Not -x: CloudStack's ISO build leaves the binaries as downloaded (0644); they are made executable when installed.
[ -f "$MOUNT_DIR/k8s/kubeadm" ] || { echo "the ISO on $device has no k8s/kubeadm: is it the binaries ISO of $VERSION?" >&2; exit 2; }

# Images first, so kubeadm finds them locally on a node without registry access.
if [ -d "$MOUNT_DIR/docker" ]; then
  for image in "$MOUNT_DIR"/docker/*.tar; do
    [ -e "$image" ] || continue
    log "importing $(basename "$image")"
    ctr -n k8s.io images import "$image" >/dev/null
  done
fi

mkdir -p "$BIN_DIR"
install -m 0755 "$MOUNT_DIR/k8s/kubeadm" "$BIN_DIR/kubeadm"
# CNI plugins and crictl of the version, where CKS installs them.
for archive in "$MOUNT_DIR"/cni/cni-plugins-*64.tgz; do
  [ -e "$archive" ] || continue
  mkdir -p /opt/cni/bin
  tar -xzf "$archive" -C /opt/cni/bin
done
for archive in "$MOUNT_DIR"/cri-tools/crictl-linux-*64.tar.gz; do
  [ -e "$archive" ] || continue
  tar -xzf "$archive" -C "$BIN_DIR"
done

# The node's own settings for kubeadm's upgrades, if its admin wrote them: a kubeadm
# UpgradeConfiguration (e.g. apply.ignorePreflightErrors for a check that cannot pass on this node).
# kubeadm keeps no such settings in the cluster, and CKS's script passes none.
UPGRADE_CONFIG=/etc/kubernetes/kubeadm-upgrade.yaml
set --
if [ -f "$UPGRADE_CONFIG" ]; then
  log "using the node's kubeadm UpgradeConfiguration $UPGRADE_CONFIG"
  set -- --config "$UPGRADE_CONFIG"
fi

if [ "$IS_FIRST_CONTROL" = true ]; then
  log "kubeadm upgrade apply v$VERSION"
  kubeadm upgrade apply "v$VERSION" --yes "$@"
elif [ "$IS_OLD" = true ]; then
  log "kubeadm upgrade node config"
  kubeadm upgrade node config --kubelet-version "v$VERSION"
else
  log "kubeadm upgrade node"
  kubeadm upgrade node "$@"
fi

# kubelet and kubectl are replaced only after kubeadm succeeded, with kubelet stopped, so the node
# never runs a kubelet newer than its control plane allows. install replaces the file (a running
# binary cannot be written to: "Text file busy").
log "replacing kubelet and kubectl"
systemctl stop kubelet
install -m 0755 "$MOUNT_DIR/k8s/kubelet" "$BIN_DIR/kubelet"
install -m 0755 "$MOUNT_DIR/k8s/kubectl" "$BIN_DIR/kubectl"
systemctl daemon-reload
systemctl restart kubelet

# The CKS addons of the ISO, on the first control-plane node only (see the header). `kubectl apply` is
# idempotent, so a retried upgrade may apply them again. The API server's static pod may be restarted by
# the new kubelet right now: each apply is tried ADDON_ATTEMPTS times, ADDON_ATTEMPT_SLEEP s apart.
ADMIN_CONF=/etc/kubernetes/admin.conf
ADDON_ATTEMPTS=12
ADDON_ATTEMPT_SLEEP=10
addons=""
addon() { addons="$addons
cks-addon $*"; }
apply_addon() { # manifest file name in the ISO
  if [ ! -f "$ADMIN_CONF" ]; then
    addon "$1" failed "no $ADMIN_CONF on this node to apply it with"
    return 0
  fi
  try=1
  while :; do
    log "kubectl apply -f $1 (attempt $try of $ADDON_ATTEMPTS)"
    if kubectl --kubeconfig "$ADMIN_CONF" apply -f "$MOUNT_DIR/$1"; then
      addon "$1" applied
      return 0
    else
      rc=$?
    fi
    if [ "$try" -ge "$ADDON_ATTEMPTS" ]; then
      addon "$1" failed "kubectl apply exited $rc after $ADDON_ATTEMPTS attempts"
      return 0
    fi
    sleep "$ADDON_ATTEMPT_SLEEP"
    try=$((try + 1))
  done
}
if [ "$IS_FIRST_CONTROL" = true ]; then
  if [ "$APPLY_ADDONS" != true ]; then
    addon network.yaml skipped "applyAddons is false"
    addon dashboard.yaml skipped "applyAddons is false"
  else
  if [ -f "$MOUNT_DIR/network.yaml" ]; then apply_addon network.yaml; else addon network.yaml absent; fi
  if [ -f "$MOUNT_DIR/headlamp.yaml" ]; then apply_addon headlamp.yaml
  elif [ -f "$MOUNT_DIR/dashboard.yaml" ]; then apply_addon dashboard.yaml
  else addon dashboard.yaml absent "the ISO has neither headlamp.yaml nor dashboard.yaml"; fi
  fi
  # Together at the end, where the operator's tail of the log finds them whatever kubectl printed.
  printf '%s\n' "$addons" | sed '/^$/d'
fi
log "node upgraded to v$VERSION"
