# Container images without a container engine: directories become gzipped layers of an OCI image
# layout and of a docker-archive, reproducibly (name-ordered tar entries, fixed owner and times
# from SOURCE_EPOCH, gzip without name or time), so the same directories give the same digest.
# Sourced by hack/image.sh (the operator's image) and hack/testbed.sh (the real node's images).

# oci_image REF OUT CONFIG DIR...
#   REF     the image's name:tag, e.g. registry.k8s.io/pause:3.10.1 or cks-node-operator:0.3.0
#   OUT     writes OUT.oci.tar (OCI layout), OUT.docker.tar (docker-archive) and OUT.digest
#   CONFIG  the JSON members of the image config's "config" object, e.g. "User":"185:185",...
#   DIR...  one layer per directory, bottom first
# Needs SOURCE_EPOCH (seconds) for every file time and the image's creation time.
oci_image() {
  local ref=$1 out=$2 config=$3; shift 3
  local tag=${ref##*:} name=${ref%:*} work created
  created=$(date -u -d "@$SOURCE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
  work=$(mktemp -d)
  mkdir -p "$work/oci/blobs/sha256" "$work/docker"
  local layers="" diff_ids="" history="" docker_layers="" dir diff_id digest
  for dir in "$@"; do
    oci_tar_dir "$dir" "$work/layer.tar"
    diff_id=$(oci_sha "$work/layer.tar")
    mkdir -p "$work/docker/$diff_id"
    cp "$work/layer.tar" "$work/docker/$diff_id/layer.tar"
    gzip -n -6 < "$work/layer.tar" > "$work/layer.tar.gz"
    digest=$(oci_sha "$work/layer.tar.gz")
    mv "$work/layer.tar.gz" "$work/oci/blobs/sha256/$digest"
    layers+="${layers:+,}{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$digest\",\"size\":$(stat -c %s "$work/oci/blobs/sha256/$digest")}"
    diff_ids+="${diff_ids:+,}\"sha256:$diff_id\""
    history+="${history:+,}{\"created\":\"$created\",\"created_by\":\"$(basename "$dir")\"}"
    docker_layers+="${docker_layers:+,}\"$diff_id/layer.tar\""
  done
  printf '%s' "{\"architecture\":\"amd64\",\"os\":\"linux\",\"created\":\"$created\",\"config\":{$config},\
\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[$diff_ids]},\"history\":[$history]}" > "$work/config.json"
  local config_digest manifest
  config_digest=$(oci_sha "$work/config.json")
  cp "$work/config.json" "$work/oci/blobs/sha256/$config_digest"
  cp "$work/config.json" "$work/docker/$config_digest.json"
  printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\
\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"sha256:$config_digest\",\"size\":$(stat -c %s "$work/config.json")},\
\"layers\":[$layers]}" > "$work/manifest.json"
  manifest=$(oci_sha "$work/manifest.json")
  mv "$work/manifest.json" "$work/oci/blobs/sha256/$manifest"
  # ref.name is the tag (the OCI layout convention, what skopeo's oci-archive:FILE:TAG matches);
  # io.containerd.image.name is the full name that ctr images import gives the image.
  printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\
\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:$manifest\",\
\"size\":$(stat -c %s "$work/oci/blobs/sha256/$manifest"),\"annotations\":{\"org.opencontainers.image.ref.name\":\"$tag\",\
\"io.containerd.image.name\":\"$(oci_full_name "$name"):$tag\"}}]}" > "$work/oci/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' > "$work/oci/oci-layout"
  printf '%s' "[{\"Config\":\"$config_digest.json\",\"RepoTags\":[\"$ref\"],\"Layers\":[$docker_layers]}]" > "$work/docker/manifest.json"
  oci_tar_dir "$work/oci" "$out.oci.tar"
  oci_tar_dir "$work/docker" "$out.docker.tar"
  echo "sha256:$manifest" > "$out.digest"
  rm -rf "$work"
}

# A reproducible tar of a directory's contents: relative paths in name order, owner 0, SOURCE_EPOCH times.
oci_tar_dir() { # dir out
  (cd "$1" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort \
    | tar --no-recursion -T - --format=posix --numeric-owner --owner=0 --group=0 --mtime="@$SOURCE_EPOCH" \
        --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf "$2")
}

oci_sha() { sha256sum "$1" | cut -d' ' -f1; }

# The name a container runtime resolves a short name to (cks-node-operator -> docker.io/library/cks-node-operator).
oci_full_name() {
  local first=${1%%/*}
  case "$1" in
    */*) case "$first" in *.*|*:*|localhost) echo "$1" ;; *) echo "docker.io/$1" ;; esac ;;
    *) echo "docker.io/library/$1" ;;
  esac
}
