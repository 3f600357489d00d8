#!/bin/sh
# The ISO canary of the CloudStackIso executor (docs/upgrade.md, "ISO canary"). The operator runs it on the
# first node to be upgraded, with the target version's binaries ISO attached to the node's VM, before any
# node is cordoned: a bad ISO is found while every node still serves. It only reads: the ISO is mounted
# read-only, nothing is installed or imported, and the node's own kubeadm, kubelet and images are not
# touched (the ISO's kubeadm runs from a temporary copy, to print its version and its image list).
#
# Usage: verify-iso.sh <version> [--without <image>]... [--tree <dir>]
#   version    e.g. 1.33.4
#   --without  an image `kubeadm config images list` names that this cluster does not run (coredns,
#              kube-proxy): kubeadm does not upgrade an addon the cluster was made without, so its
#              archive is not required
#   --tree     check the unpacked ISO in <dir> instead of finding and mounting the attached one
#
# Prints one line per check, `iso-canary: ok <check>: <what>` or `iso-canary: bad <check>: <what is wrong>`,
# then `iso-canary: verdict passed` or `iso-canary: verdict failed`. It ends 0 once it has a verdict, good
# or bad; any other end means it could not judge the ISO.
set -eu

# As the upgrade script: the Job container's PATH is the image's, not the host's.
PATH=/opt/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

VERSION="${1:?version}"
VERSION="${VERSION#v}"
shift
WITHOUT=" "
TREE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --without) WITHOUT="$WITHOUT${2:?image} "; shift 2 ;;
    --tree) TREE="${2:?dir}"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 64 ;;
  esac
done
# The upgrade script's mount point: a mount left by a killed canary is then taken away by the upgrade too.
MOUNT_DIR=/mnt/k8sdisk
ISO_ATTEMPTS=10
ISO_ATTEMPT_SLEEP=5
BAD=0

ok() { echo "iso-canary: ok $*"; }
bad() { echo "iso-canary: bad $*"; BAD=1; }
verdict() {
  if [ "$BAD" = 0 ]; then echo "iso-canary: verdict passed"; else echo "iso-canary: verdict failed"; fi
  exit 0
}

WORK=$(mktemp -d)
mounted=""
cleanup() {
  rm -rf "$WORK"
  if [ -n "$mounted" ]; then umount "$MOUNT_DIR" 2>/dev/null && rmdir "$MOUNT_DIR" 2>/dev/null || true; fi
}
trap cleanup EXIT

if [ -n "$TREE" ]; then
  ISO="$TREE"
  where="$TREE"
else
  # As the upgrade script: a mount left by a killed run is taken away, and the ISO is the first
  # ISO 9660 device holding k8s/ (a VM may carry another one, such as CloudStack's config drive).
  if awk -v dir="$MOUNT_DIR" '$5 == dir {found = 1} END {exit !found}' /proc/self/mountinfo; then
    umount "$MOUNT_DIR" || umount -l "$MOUNT_DIR"
  fi
  mkdir -p "$MOUNT_DIR"
  device=""
  attempt=1
  while [ -z "$device" ]; do
    for candidate in $(blkid -c /dev/null -o device -t TYPE=iso9660 2>/dev/null || true); do
      if mount -o ro "$candidate" "$MOUNT_DIR" 2>/dev/null; then
        if [ -d "$MOUNT_DIR/k8s" ]; then device=$candidate; mounted=yes; break; fi
        umount "$MOUNT_DIR"
      fi
    done
    [ -z "$device" ] || break
    if [ "$attempt" -ge "$ISO_ATTEMPTS" ]; then
      rmdir "$MOUNT_DIR" 2>/dev/null || true
      bad "iso: no device with an ISO 9660 filesystem holding k8s/ after $ISO_ATTEMPTS attempts: the attached ISO is not a CKS binaries ISO"
      verdict
    fi
    sleep "$ISO_ATTEMPT_SLEEP"
    attempt=$((attempt + 1))
  done
  ISO="$MOUNT_DIR"
  where="$device"
fi
ok "iso: $where holds k8s/"

# kubeadm: its version is the target's, and it names the images the target needs.
images=""
if [ -f "$ISO/k8s/kubeadm" ]; then
  # Not executable on the ISO (CloudStack's ISO build leaves it 0644): a copy is.
  cp "$ISO/k8s/kubeadm" "$WORK/kubeadm"
  chmod 0755 "$WORK/kubeadm"
  if found=$("$WORK/kubeadm" version -o short 2>&1); then
    if [ "$found" = "v$VERSION" ]; then
      ok "kubeadm: k8s/kubeadm is $found"
    else
      bad "kubeadm: k8s/kubeadm is $found, not the target v$VERSION"
    fi
  else
    bad "kubeadm: k8s/kubeadm does not run: $(echo "$found" | tail -n 1)"
  fi
  if ! images=$("$WORK/kubeadm" config images list --kubernetes-version "v$VERSION" 2>"$WORK/images.err"); then
    bad "images: k8s/kubeadm could not list the images of v$VERSION: $(tail -n 1 "$WORK/images.err")"
    images=""
  fi
else
  bad "kubeadm: the ISO has no k8s/kubeadm"
fi
for binary in kubelet kubectl; do
  if [ -f "$ISO/k8s/$binary" ]; then ok "$binary: k8s/$binary present"; else bad "$binary: the ISO has no k8s/$binary"; fi
done

# Every image kubeadm names has its archive in docker/, named as CloudStack's ISO build names it (<name>:<tag>.tar).
if [ -n "$images" ]; then
  present=""
  missing=""
  skipped=""
  for ref in $images; do
    name=${ref##*/}
    case "$WITHOUT" in
      *" ${name%%:*} "*) skipped="$skipped ${name%%:*}"; continue ;;
    esac
    if [ -f "$ISO/docker/$name.tar" ]; then present="$present $name"; else missing="$missing docker/$name.tar"; fi
  done
  if [ -n "$missing" ]; then
    bad "images: no archive for$missing"
  fi
  ok "images: archives for${present:- none}${skipped:+ (not required, this cluster runs none:$skipped)}"
fi

# CNI plugins and crictl, where the upgrade script takes them from.
set -- "$ISO"/cni/cni-plugins-*64.tgz
if [ -e "$1" ]; then ok "cni: ${1#"$ISO"/}"; else bad "cni: the ISO has no cni/cni-plugins-*64.tgz"; fi
set -- "$ISO"/cri-tools/crictl-linux-*64.tar.gz
if [ -e "$1" ]; then ok "cri-tools: ${1#"$ISO"/}"; else bad "cri-tools: the ISO has no cri-tools/crictl-linux-*64.tar.gz"; fi

# CKS's addon manifests, which CloudStack's own upgrade applies from the same ISO.
for manifest in network.yaml dashboard.yaml; do
  if [ -f "$ISO/$manifest" ]; then ok "manifests: $manifest present"; else bad "manifests: the ISO has no $manifest"; fi
done

# Checksums where the ISO carries them: <file>.sha256 beside a file (as dl.k8s.io publishes them) holds its digest.
sums=0
find "$ISO" -name '*.sha256' -type f > "$WORK/sums"
while IFS= read -r sum; do
  file=${sum%.sha256}
  expected=$(cut -d ' ' -f 1 < "$sum")
  if [ ! -f "$file" ]; then
    bad "checksums: ${sum#"$ISO"/} names ${file#"$ISO"/}, which the ISO lacks"
  elif [ "$(sha256sum "$file" | cut -d ' ' -f 1)" != "$expected" ]; then
    bad "checksums: ${file#"$ISO"/} does not match ${sum#"$ISO"/}"
  else
    sums=$((sums + 1))
  fi
done < "$WORK/sums"
if [ -s "$WORK/sums" ]; then
  [ "$sums" = 0 ] || ok "checksums: $sums file(s) match their .sha256"
else
  ok "checksums: the ISO carries no .sha256 files"
fi

verdict
