# The operator image, for those who build with a container engine. It is the same image that
# hack/image.sh builds without one (same layers, user, entrypoint), from the layers that script
# stages under target/image/:
#   ./mvnw package -DskipTests && hack/image.sh
#   docker build -t <your-registry>/cks-node-operator:0.3.0 .
# hack/image.sh alone already writes target/cks-node-operator-0.3.0.oci.tar and .docker.tar.
FROM scratch
COPY target/image/runtime/ /
COPY target/image/dependencies/ /
COPY target/image/application/ /
USER 185:185
WORKDIR /deployments
# The image's JVM defaults, the one place for them (hack/image.sh and hack/benchmark-idle.sh read them
# from here), sized for the operator (docs/benchmarks.md, "Idle beside 1,000 Nodes": live heap 20-45 MB):
# the serial collector (no G1 regions or remembered sets; pauses of a ~100 MB heap are milliseconds), the
# heap at 15 % of the container's memory limit (77 MiB of the chart's 512 MiB; MinRAMPercentage too,
# as below ~700 MiB the JVM ignores MaxRAMPercentage under 25 % and takes 126 MiB) with a sixth of it
# young, all of it from the start (InitialRAMPercentage: a heap grown from 8 MiB took 70-110 full
# collections, about a second, before the operator was ready; RSS stays the same), the C1 compiler only (start-up and idle CPU matter here, not peak
# throughput), smaller thread stacks and code cache, one Netty arena (a handful of API connections), and
# two glibc malloc arenas. The chart's jvmOptions replaces JDK_JAVA_OPTIONS; the
# log manager is on the command line (ENTRYPOINT) so that no override loses it.
ENV PATH=/opt/java/bin JAVA_HOME=/opt/java LANG=C.UTF-8 MALLOC_ARENA_MAX=2 \
    JDK_JAVA_OPTIONS="-XX:+UseSerialGC -XX:MaxRAMPercentage=15 -XX:MinRAMPercentage=15 -XX:InitialRAMPercentage=15 -XX:NewRatio=5 -XX:TieredStopAtLevel=1 -Xss512k -XX:ReservedCodeCacheSize=32m -Dio.netty.allocator.numDirectArenas=1 -Dio.netty.allocator.numHeapArenas=1"
EXPOSE 8080
ENTRYPOINT ["/opt/java/bin/java", "-Djava.util.logging.manager=org.jboss.logmanager.LogManager", "-jar", "/deployments/quarkus-run.jar"]
