#!/usr/bin/env bash
# Builds the operator's container image without a container engine, a registry or a network:
# a jlink'ed Java runtime plus the glibc libraries it links, on an empty base, and the Quarkus
# application in two more layers (dependencies, then the application itself, so an upgrade of
# the operator usually ships one small layer).
#
#   ./mvnw package -DskipTests && hack/image.sh
#
# Writes, for IMAGE (default cks-node-operator:<chart appVersion>):
#   target/cks-node-operator-<tag>.oci.tar     an OCI image layout (skopeo: oci-archive:…)
#   target/cks-node-operator-<tag>.docker.tar  the same image as a docker-archive (docker load,
#                                              ctr images import, skopeo: docker-archive:…)
#   target/image/                              the staged layers, which the Dockerfile also copies
# The build is reproducible: the same application and JDK give the same image digest. File
# times, owners and the image's creation time come from SOURCE_DATE_EPOCH (default: the time of
# the last commit), layers are tarred in name order and gzipped without a name or time.
# It needs a JDK with jmods (JAVA_HOME, or the java on PATH), GNU tar, gzip and sha256sum.
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
java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
[ -x "$java_home/bin/jlink" ] && [ -d "$java_home/jmods" ] \
  || fail "$java_home has no jlink or no jmods: set JAVA_HOME to a full JDK 17+"
for tool in tar gzip sha256sum; do command -v $tool >/dev/null || fail "$tool is needed"; done
SOURCE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}"

rm -rf "$stage"
mkdir -p "$stage/runtime" "$stage/dependencies/deployments" "$stage/application/deployments"

say "jlink: a Java runtime from $java_home with $modules"
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
  --compress=2 --output "$stage/runtime/opt/java"
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
