#!/usr/bin/env bash
# Builds the operator's container image without a container engine, a registry or a network:
# a jlink'ed Java runtime plus the glibc libraries it links, on an empty base, and the Quarkus
# application in two more layers (dependencies, then the application itself with its class-data
# archive, so an upgrade of the operator that keeps its dependencies ships one layer).
#
#   ./mvnw package -DskipTests && hack/image.sh
#   hack/image.sh --train    # first rewrites hack/image.classlist (after a dependency change)
#
# Writes, for IMAGE (default cks-node-operator:<chart appVersion>):
#   target/cks-node-operator-<tag>.oci.tar     an OCI image layout (skopeo: oci-archive:…)
#   target/cks-node-operator-<tag>.docker.tar  the same image as a docker-archive (docker load,
#                                              ctr images import, skopeo: docker-archive:…)
#   target/image/                              the staged layers, which the Dockerfile also copies
# The build is reproducible: the same application and JDK give the same image digest. File
# times, owners and the image's creation time come from SOURCE_DATE_EPOCH (default: the time of
# the last commit), layers are tarred in name order and gzipped without a name or time.
# The runtime is jlinked from a JDK 25 or newer (IMAGE_JDK, else JAVA_HOME or the java on PATH if they are
# one, else one under /usr/lib/jvm), whatever JDK builds the application: its class-data archive (below)
# is the same file dump after dump, which Java 17's is not (docs/benchmarks.md, "Start-up beside 1,000
# Nodes"). It needs GNU tar, gzip and sha256sum.
#
# The class-data archive: the classes the operator loads until it is ready (JDK, Quarkus, Fabric8,
# Jackson, Vert.x...) parsed and laid out ahead of time, the runtime's default archive
# (/opt/java/lib/server/classes.jsa, so no JVM option can lose it), in the application layer as it
# changes with the application. Its input is the committed class list hack/image.classlist: a training run
# decides which classes load, and two training runs differ by a few classes, so the list is written once
# by --train (the operator started against a test bed, hack/testbed.sh, until ready) and then read by
# every build. The dump runs in the interpreter with a fixed heap (as the JDK's own
# reproducibility test does). A list that names jars the application no longer has fails the build.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/hack/lib/oci.sh"
app="$root/target/quarkus-app"
chart="$root/deploy/helm/cks-node-operator/Chart.yaml"
tag=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$chart")
name="${IMAGE_NAME:-cks-node-operator}"
tag="${IMAGE_TAG:-$tag}"
stage="$root/target/image"
uid=185
# The modules the operator's dependencies use (java.desktop for java.beans, jdk.crypto.ec for TLS
# with EC keys, jdk.management for the JVM metrics, jdk.unsupported for Netty).
modules=java.base,java.desktop,java.logging,java.management,java.naming,java.net.http,java.security.jgss,java.sql,java.xml,jdk.crypto.ec,jdk.management,jdk.unsupported,jdk.zipfs
say() { printf '[image] %s\n' "$*" >&2; }
fail() { printf 'image: %s\n' "$*" >&2; exit 1; }

# The image's JVM defaults and malloc arenas are the Dockerfile's (where they are explained): one place
# for both ways of building the image.
java_options=$(sed -n 's/^ *JDK_JAVA_OPTIONS="\(.*\)"$/\1/p' "$root/Dockerfile")
malloc_arenas=$(sed -n 's/.*MALLOC_ARENA_MAX=\([0-9][0-9]*\).*/\1/p' "$root/Dockerfile")
[ -n "$java_options" ] && [ -n "$malloc_arenas" ] || fail "cannot read JDK_JAVA_OPTIONS and MALLOC_ARENA_MAX from the Dockerfile"

[ -f "$app/quarkus-run.jar" ] || fail "no $app/quarkus-run.jar: build the application first (./mvnw package -DskipTests)"
# Two builds at once in one tree overwrite each other's staging (one crashed the JVM's dump, the other jlink).
command -v flock >/dev/null || fail "flock is needed"
exec 9>"$root/target/image.lock"
flock -n 9 || fail "another hack/image.sh is running in this tree"
train=false
[ "${1:-}" = --train ] && train=true
classlist="$root/hack/image.classlist"
# The major version of the JDK at $1, from its release file; empty when it is none.
jdk_major() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null || true; }
java_home=""
path_jdk=$(command -v java >/dev/null && dirname "$(dirname "$(readlink -f "$(command -v java)")")" || true)
for candidate in "${IMAGE_JDK:-}" "${JAVA_HOME:-}" "$path_jdk" /usr/lib/jvm/*; do
  [ -n "$candidate" ] && [ -x "$candidate/bin/jlink" ] && [ "$(jdk_major "$candidate")" -ge 25 ] 2>/dev/null || continue
  java_home=$candidate
  break
done
[ -n "$java_home" ] || fail "no JDK 25 or newer with jlink found: set IMAGE_JDK to one"
[ -n "${IMAGE_JDK:-}" ] && [ "$java_home" != "$IMAGE_JDK" ] && fail "IMAGE_JDK=$IMAGE_JDK is no JDK 25 or newer with jlink"
for tool in tar gzip sha256sum; do command -v $tool >/dev/null || fail "$tool is needed"; done
SOURCE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}"

rm -rf "$stage"
mkdir -p "$stage/runtime" "$stage/dependencies/deployments" "$stage/application/deployments"

say "jlink: a Java runtime from $java_home with $modules"
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
  --compress=zip-6 --output "$stage/runtime/opt/java"
# java.desktop is there for java.beans only: drop its native GUI, sound and font libraries, so
# the image carries no X11, ALSA or FreeType libraries the operator never loads.
(cd "$stage/runtime/opt/java/lib" && rm -f libawt_xawt.so libjawt.so libsplashscreen.so libjsound.so \
  libfontmanager.so liblcms.so libjavajpeg.so)
# Trust the CAs the build machine trusts (the JDK's own store may be a link into /etc).
cp -L "$java_home/lib/security/cacerts" "$stage/runtime/opt/java/lib/security/cacerts"

say "the C libraries the runtime links"
libs=$(find "$stage/runtime/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' \) -exec ldd {} + 2>/dev/null \
  | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | sort -u)
for lib in $libs; do
  case "$lib" in "$stage"/*) continue ;; esac
  mkdir -p "$stage/runtime$(dirname "$lib")"
  cp -L "$lib" "$stage/runtime$lib"
done
mkdir -p "$stage/runtime/etc" "$stage/runtime/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\noperator:x:%s:%s:cks-node-operator:/tmp:/sbin/nologin\n' $uid $uid > "$stage/runtime/etc/passwd"
printf 'root:x:0:\noperator:x:%s:\n' $uid > "$stage/runtime/etc/group"
printf 'hosts: files dns\n' > "$stage/runtime/etc/nsswitch.conf"

cp -r "$app/lib" "$stage/dependencies/deployments/"
cp -r "$app/quarkus-run.jar" "$app/app" "$app/quarkus" "$stage/application/deployments/"

# The application as it is at /deployments in the image (both layers), for the training and the dump only.
cds="$root/target/image-cds"
rm -rf "$cds"
mkdir -p "$cds/deployments"
cp -r "$stage/dependencies/deployments/." "$stage/application/deployments/." "$cds/deployments/"
# The archive records the time and size of each jar on the class path, and the JVM compares them at start:
# the image's files carry SOURCE_EPOCH.
find "$cds/deployments" -exec touch -h -d "@$SOURCE_EPOCH" {} +
java="$stage/runtime/opt/java/bin/java"
if $train; then
  # The classes loaded until the operator is ready and answers its probes and a scrape: with an API server
  # to talk to (TLS, the first lists and watches, Node objects), which the start of every pod has too.
  command -v curl >/dev/null || fail "curl is needed for the training"
  bed=imagetrain
  say "training: the operator started against a test bed ($bed), until ready and 5 s more"
  "$root/hack/testbed.sh" up "$bed" 3 > "$cds/bed.log"
  trap '"$root/hack/testbed.sh" down "$bed" >/dev/null 2>&1 || true' EXIT
  "$root/hack/testbed.sh" operator-kubeconfig "$bed" "$cds/training.kubeconfig"
  port=$((20000 + RANDOM % 10000))
  (cd "$cds" && env KUBECONFIG="$cds/training.kubeconfig" JDK_JAVA_OPTIONS="$java_options" MALLOC_ARENA_MAX="$malloc_arenas" \
    "$java" -XX:MaxRAM=512m -Xshare:off -XX:DumpLoadedClassList="$cds/trained.classlist" \
    -Djava.util.logging.manager=org.jboss.logmanager.LogManager -Dquarkus.http.port=$port -Dcks.namespace=cks-node-operator \
    -jar "$cds/deployments/quarkus-run.jar" > "$cds/training.log" 2>&1 & echo $! > "$cds/training.pid")
  training=$(cat "$cds/training.pid")
  for _ in $(seq 600); do
    curl -sf "localhost:$port/q/health/ready" >/dev/null 2>&1 && break
    kill -0 "$training" 2>/dev/null || fail "the training run exited: $(tail -5 "$cds/training.log")"
    sleep 0.1
  done
  curl -sf "localhost:$port/q/health/ready" >/dev/null || { kill -9 "$training"; fail "the training run was not ready within 60 s: $cds/training.log"; }
  sleep 5
  curl -sf "localhost:$port/q/health/live" >/dev/null
  curl -sf "localhost:$port/q/metrics" >/dev/null
  # The list is written as classes load; a run that has not stopped 20 s after SIGTERM is killed.
  kill "$training"
  for _ in $(seq 20); do kill -0 "$training" 2>/dev/null || break; sleep 1; done
  kill -9 "$training" 2>/dev/null || true
  # The image's paths, not this machine's.
  { echo "# The classes of the image's class-data archive: written by hack/image.sh --train, read by every image build."
    sed "s#source: $cds/deployments/#source: /deployments/#" "$cds/trained.classlist"; } > "$classlist"
  say "wrote $classlist: $(grep -vc '^[#@]' "$classlist") classes"
fi
[ -f "$classlist" ] || fail "no $classlist: run hack/image.sh --train"
missing=$(sed -n 's#.* source: /deployments/\([^ ]*\).*#\1#p' "$classlist" | sort -u | while read -r jar; do
  [ -f "$cds/deployments/$jar" ] || echo "$jar"; done)
[ -z "$missing" ] || fail "hack/image.classlist names jars the application no longer has (run hack/image.sh --train): $(echo $missing)"
sed "s#source: /deployments/#source: $cds/deployments/#" "$classlist" > "$cds/classlist"
say "class-data archive of $(grep -vc '^[#@]' "$classlist") classes"
mkdir -p "$stage/application/opt/java/lib/server"
# -Xint, the fixed heap and TLABs: what the JDK's test of a reproducible archive (DeterministicDump) runs with.
"$java" -Xshare:dump -XX:SharedClassListFile="$cds/classlist" -XX:SharedArchiveFile="$stage/application/opt/java/lib/server/classes.jsa" \
  -XX:+UseSerialGC -Xint -Xmx128m -Xms128m -Xmn64m -XX:-ResizeTLAB -cp "$cds/deployments/quarkus-run.jar" > "$cds/dump.log" 2>&1 \
  || fail "the class-data dump failed: $(tail -5 "$cds/dump.log")"
# Modes do not depend on the build machine's umask.
chmod -R u+rwX,go+rX,go-w "$stage"
chmod 1777 "$stage/runtime/tmp"

say "layers, image config, OCI layout and docker-archive"
oci_image "$name:$tag" "$root/target/$name-$tag" "\"User\":\"$uid:$uid\",\"WorkingDir\":\"/deployments\",\
\"Env\":[\"PATH=/opt/java/bin\",\"JAVA_HOME=/opt/java\",\"LANG=C.UTF-8\",\"MALLOC_ARENA_MAX=$malloc_arenas\",\"JDK_JAVA_OPTIONS=$java_options\"],\
\"Entrypoint\":[\"/opt/java/bin/java\",\"-Djava.util.logging.manager=org.jboss.logmanager.LogManager\",\"-jar\",\"/deployments/quarkus-run.jar\"],\"ExposedPorts\":{\"8080/tcp\":{}},\
\"Labels\":{\"org.opencontainers.image.title\":\"$name\",\"org.opencontainers.image.version\":\"$tag\"}" \
  "$stage/runtime" "$stage/dependencies" "$stage/application"
for layer in runtime dependencies application; do
  say "layer $layer: $(( $(du -sb "$stage/$layer" | cut -f1) / 1048576 )) MiB"
done
say "$name:$tag $(cat "$root/target/$name-$tag.digest")"
say "$(( $(stat -c %s "$root/target/$name-$tag.oci.tar") / 1048576 )) MiB compressed (OCI archive), $(( $(du -sb "$stage" | cut -f1) / 1048576 )) MiB unpacked"
say "target/$name-$tag.oci.tar target/$name-$tag.docker.tar"
