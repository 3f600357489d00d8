# The operator image, for those who build with a container engine. It is the same image that
# hack/image.sh builds without one (same layers, user, entrypoint), from the layers that script
# stages under target/image/:
#   ./mvnw package -DskipTests && hack/image.sh
#   docker build -t <your-registry>/cks-node-operator:0.1.0 .
# hack/image.sh alone already writes target/cks-node-operator-0.1.0.oci.tar and .docker.tar.
FROM scratch
COPY target/image/runtime/ /
COPY target/image/dependencies/ /
COPY target/image/application/ /
USER 185:185
WORKDIR /deployments
ENV PATH=/opt/java/bin JAVA_HOME=/opt/java LANG=C.UTF-8 \
    JDK_JAVA_OPTIONS="-XX:MaxRAMPercentage=75 -Djava.util.logging.manager=org.jboss.logmanager.LogManager"
EXPOSE 8080
ENTRYPOINT ["/opt/java/bin/java", "-jar", "/deployments/quarkus-run.jar"]
