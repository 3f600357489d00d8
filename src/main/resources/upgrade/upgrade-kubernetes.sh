#!/bin/sh
# Licensed under the Apache License, Version 2.0; derived from Apache CloudStack's
# plugins/integrations/kubernetes-service/src/main/resources/script/upgrade-kubernetes.sh (Copyright The Apache Software Foundation). See NOTICE.
#
# The node upgrade of CloudStack Kubernetes Service (CKS), as the operator runs it on each node.
# CloudStack copies its own upgrade-kubernetes.sh to a node only during its own upgrade, so the
# operator ships this copy (ConfigMap cks-node-operator-upgrade-script) and runs it in the host's
# namespaces after attaching the version's binaries ISO to the node's VM.
#
# Usage: upgrade-kubernetes.sh <version> <isFirstControl> <isOld> <ejectIso>
#   version         e.g. 1.33.4
#   isFirstControl  true on the first control-plane node: `kubeadm upgrade apply`; else `kubeadm upgrade node`
#   isOld           true for clusters set up before kubeadm had `upgrade node` (< 1.15): `upgrade node config`
#   ejectIso        true to eject the ISO from the guest when done (the operator detaches it through the API)
set -eu

VERSION="${1:?version}"
VERSION="${VERSION#v}"
IS_FIRST_CONTROL="${2:-false}"
IS_OLD="${3:-false}"
EJECT_ISO="${4:-false}"
MOUNT_DIR=/mnt/k8sdisk
BIN_DIR=/opt/bin

log() { echo "$(date -u +%H:%M:%S) $*"; }

# CloudStack attaches the ISO as the VM's CD-ROM; find it by its filesystem type, as CKS does,
# and fall back to the usual device name.
device=$(blkid -o device -t TYPE=iso9660 2>/dev/null | head -n1 || true)
[ -n "$device" ] || device=/dev/cdrom
mkdir -p "$MOUNT_DIR"
if ! mountpoint -q "$MOUNT_DIR"; then
  log "mounting $device on $MOUNT_DIR"
  mount -o ro "$device" "$MOUNT_DIR"
fi
cleanup() {
  umount "$MOUNT_DIR" 2>/dev/null || true
  if [ "$EJECT_ISO" = true ]; then eject "$device" 2>/dev/null || true; fi
}
trap cleanup EXIT

[ -x "$MOUNT_DIR/k8s/kubeadm" ] || { echo "the ISO on $device has no k8s/kubeadm: is it the binaries ISO of $VERSION?" >&2; exit 2; }

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
export PATH="$BIN_DIR:$PATH"

if [ "$IS_FIRST_CONTROL" = true ]; then
  log "kubeadm upgrade apply v$VERSION"
  kubeadm upgrade apply "v$VERSION" --yes
elif [ "$IS_OLD" = true ]; then
  log "kubeadm upgrade node config"
  kubeadm upgrade node config --kubelet-version "v$VERSION"
else
  log "kubeadm upgrade node"
  kubeadm upgrade node
fi

# kubelet and kubectl are replaced only after kubeadm succeeded, with kubelet stopped, so the node
# never runs a kubelet newer than its control plane allows.
log "replacing kubelet and kubectl"
systemctl stop kubelet
install -m 0755 "$MOUNT_DIR/k8s/kubelet" "$BIN_DIR/kubelet"
install -m 0755 "$MOUNT_DIR/k8s/kubectl" "$BIN_DIR/kubectl"
systemctl daemon-reload
systemctl restart kubelet
log "node upgraded to v$VERSION"
