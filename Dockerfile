# The operator image. Build the application first: ./mvnw package -DskipTests
#   docker build -t <your-registry>/cks-node-operator:0.1.0 .
FROM eclipse-temurin:17-jre
WORKDIR /deployments
COPY target/quarkus-app/lib/ lib/
COPY target/quarkus-app/*.jar ./
COPY target/quarkus-app/app/ app/
COPY target/quarkus-app/quarkus/ quarkus/
USER 185
ENV JAVA_OPTS_APPEND="-XX:MaxRAMPercentage=75 -Djava.util.logging.manager=org.jboss.logmanager.LogManager"
EXPOSE 8080
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS_APPEND -jar quarkus-run.jar"]
