#!/usr/bin/env bash
# The offline bundle: everything an air-gapped site needs to install the operator, in one archive.
#
#   ./mvnw package -DskipTests && hack/bundle.sh
#
# Writes target/cks-node-operator-<version>-offline.tar.gz, which unpacks to cks-node-operator-<version>-offline/:
#   images/cks-node-operator-<version>.docker.tar  the operator's image (hack/image.sh), for `ctr images import`
#   images/cks-node-operator-<version>.oci.tar     the same image as an OCI archive, for `skopeo copy` to a registry
#   images/upgrade-shell-<busybox>.oci.tar         the upgrade Jobs' shell (sh, nsenter, sha256sum, cut): Debian's
#                                                  static busybox on an empty base, so no Job pulls busybox from a
#                                                  public registry. Only as an OCI archive: the Jobs pin it by digest,
#                                                  and containerd keeps an OCI archive's manifest digest on import
#                                                  (a docker-archive's manifest it writes anew, with another digest)
#   cks-node-operator-<version>.tgz                the Helm chart (`helm package`), CRDs included
#   values-offline.yaml                            the values that use the imported images and never pull
#   sbom.cdx.json                                  CycloneDX SBOM of the operator's Java dependencies
#   SHA256SUMS                                     `sha256sum -c SHA256SUMS` checks every file above
#   INSTALL.md                                     the steps (the README's "Air-gapped install")
# Like the image, the archive is reproducible: name-ordered entries, owner 0, times from SOURCE_DATE_EPOCH.
# Needs what hack/image.sh needs, plus Helm (HELM, else helm on PATH, else the test bed's) and busybox
# (Debian's busybox-static).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/hack/lib/oci.sh"
chart_dir="$root/deploy/helm/cks-node-operator"
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$chart_dir/Chart.yaml")
name="cks-node-operator-$version-offline"
out="$root/target/$name"
SOURCE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct)}"

helm="${HELM:-$(command -v helm || true)}"
[ -n "$helm" ] || helm="$(bash "$root/hack/testbed.sh" bin)/helm"
[ -x "$helm" ] || { echo "bundle: Helm is needed (HELM=..., helm on PATH, or hack/testbed.sh build)" >&2; exit 1; }
command -v busybox >/dev/null || { echo "bundle: busybox is needed for the upgrade Jobs' image (apt-get install busybox-static)" >&2; exit 1; }
# The image has no libraries: its busybox must be the static one.
if ldd "$(command -v busybox)" >/dev/null 2>&1; then
  echo "bundle: $(command -v busybox) is not statically linked (apt-get install busybox-static)" >&2; exit 1
fi

rm -rf "$out" "$out.tar.gz"
mkdir -p "$out/images"

echo "bundle: the operator's image" >&2
bash "$root/hack/image.sh" >&2
for kind in docker oci; do cp "$root/target/cks-node-operator-$version.$kind.tar" "$out/images/"; done

echo "bundle: the upgrade Jobs' shell" >&2
busybox_version=$(busybox 2>&1 | sed -n '1s/^BusyBox v\([0-9.]*\).*/\1/p')
shell_ref="cks-node-operator/upgrade-shell:$busybox_version"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/shell/bin"
cp "$(command -v busybox)" "$stage/shell/bin/busybox"
for applet in $(busybox --list); do [ "$applet" = busybox ] || ln -s busybox "$stage/shell/bin/$applet"; done
oci_image "$shell_ref" "$stage/upgrade-shell" "\"Env\":[\"PATH=/bin\"],\"Entrypoint\":[\"/bin/sh\"]" "$stage/shell"
cp "$stage/upgrade-shell.oci.tar" "$out/images/upgrade-shell-$busybox_version.oci.tar"
shell_image="$shell_ref@$(cat "$stage/upgrade-shell.digest")"

echo "bundle: the chart" >&2
"$helm" package "$chart_dir" -d "$out" >&2

cat > "$out/values-offline.yaml" <<EOF
# Images from this bundle, imported into every node's containerd (INSTALL.md): nothing is pulled.
image:
  repository: cks-node-operator
  tag: "$version"
  pullPolicy: Never
upgrade:
  # Pinned by digest: the image imported from images/upgrade-shell-$busybox_version.oci.tar.
  jobImage: "$shell_image"
tests:
  image: "$shell_image"
EOF

echo "bundle: the SBOM" >&2
(cd "$root" && ./mvnw -B -q org.cyclonedx:cyclonedx-maven-plugin:makeBom >&2)
cp "$root/target/bom.json" "$out/sbom.cdx.json"

cat > "$out/INSTALL.md" <<EOF
# cks-node-operator $version, offline

1. Check the bundle: \`sha256sum -c SHA256SUMS\`.
2. On every node (or push the OCI archives to your registry with \`skopeo copy oci-archive:FILE docker://REGISTRY/NAME:TAG\`
   and set \`image.repository\` and \`upgrade.jobImage\` to match):

       ctr -n k8s.io images import images/cks-node-operator-$version.docker.tar
       ctr -n k8s.io images import --base-name docker.io/cks-node-operator/upgrade-shell --digests images/upgrade-shell-$busybox_version.oci.tar

   The second also records the shell under its digest (\`--digests\`), the name the pods that pin it ask for: an import
   records only the tag, and a digest-pinned image found by tag alone would be pulled.

3. Install (the namespace must allow the upgrade Jobs' privileged pods):

       kubectl create namespace cks-node-operator
       kubectl label namespace cks-node-operator pod-security.kubernetes.io/enforce=privileged
       helm install cks-node-operator cks-node-operator-$version.tgz -n cks-node-operator -f values-offline.yaml
       helm test cks-node-operator -n cks-node-operator

The upgrade Jobs run $shell_image.
EOF

(cd "$out" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
# The archive holds the directory itself, so it unpacks into one directory.
mkdir -p "$stage/archive" && mv "$out" "$stage/archive/$name"
oci_tar_dir "$stage/archive" "$stage/bundle.tar"
mv "$stage/archive/$name" "$out"
gzip -n -6 < "$stage/bundle.tar" > "$out.tar.gz"
echo "$out.tar.gz"
