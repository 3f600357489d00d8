package dev.cks.nodeops.audit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.audit.CksNodeNames.Role;

class CksNodeNamesTest {
    private final CksNodeNames prod = CksNodeNames.of("prod", "8a1e7c2e-0000-4000-8000-000000000001");

    @Test
    void recognisesEachRole() {
        assertThat(prod.roleOf("prod-control-18c2f3a9b1")).contains(Role.CONTROL);
        assertThat(prod.roleOf("prod-node-18c2f3a9b1")).contains(Role.NODE);
        assertThat(prod.roleOf("prod-etcd-1-18c2f3a9b1")).contains(Role.ETCD);
    }

    @Test
    void recordedCloudStackNameMatches() {
        // From listKubernetesClusters as CloudStack 4.17 returned it (src/test/resources/cloudstack/).
        assertThat(CksNodeNames.of("cks-cluster", "177d0eeb").roleOf("cks-cluster-control-1803b55c32d"))
                .contains(Role.CONTROL);
    }

    @Test
    void comparesCaseInsensitively() {
        assertThat(CksNodeNames.of("Prod", "x").roleOf("prod-node-18c2f3a9b1")).contains(Role.NODE);
        assertThat(prod.roleOf("PROD-NODE-18C2F3A9B1")).contains(Role.NODE);
    }

    @Test
    void rejectsNamesThatOnlyLookAlike() {
        assertThat(prod.roleOf("prod-node-zz12345678")).as("non-hex suffix").isEmpty();
        assertThat(prod.roleOf("prod-node-cafe")).as("suffix too short to be a timestamp").isEmpty();
        assertThat(prod.roleOf("prod-node-")).isEmpty();
        assertThat(prod.roleOf("prod-worker-18c2f3a9b1")).as("unknown role").isEmpty();
        assertThat(prod.roleOf("prod-etcd-18c2f3a9b1")).as("etcd without index").isEmpty();
        assertThat(prod.roleOf("prod-etcd-x-18c2f3a9b1")).isEmpty();
        assertThat(prod.roleOf("prod-node-18c2f3a9b1-extra")).isEmpty();
        assertThat(prod.roleOf("prodnode-18c2f3a9b1")).isEmpty();
        assertThat(prod.roleOf("xprod-node-18c2f3a9b1")).isEmpty();
        assertThat(prod.roleOf(null)).isEmpty();
    }

    @Test
    void anotherClustersPrefixDoesNotMatch() {
        assertThat(prod.roleOf("prod2-node-18c2f3a9b1")).isEmpty();
        assertThat(prod.roleOf("prod-eu-node-18c2f3a9b1")).isEmpty();
        assertThat(CksNodeNames.of("prod-eu", "x").roleOf("prod-node-18c2f3a9b1")).isEmpty();
        // "prod-node" is a legal cluster name; its VMs are not prod's.
        assertThat(prod.roleOf("prod-node-node-18c2f3a9b1")).isEmpty();
        assertThat(CksNodeNames.of("prod-node", "x").roleOf("prod-node-node-18c2f3a9b1")).contains(Role.NODE);
    }

    @Test
    void longNamesAreCutTo43AndTheOlder40() {
        String name = "a-very-long-cluster-name-for-the-analytics-team-eu";
        CksNodeNames names = CksNodeNames.of(name, "x");
        assertThat(names.prefixes()).containsExactly(name.substring(0, 43), name.substring(0, 40));
        assertThat(names.roleOf(name.substring(0, 43) + "-node-18c2f3a9b1")).contains(Role.NODE);
        assertThat(names.roleOf(name.substring(0, 40) + "-control-18c2f3a9b1")).contains(Role.CONTROL);
        assertThat(names.roleOf(name + "-node-18c2f3a9b1")).as("uncut").isEmpty();
        assertThat(names.roleOf(name.substring(0, 41) + "-node-18c2f3a9b1")).isEmpty();
    }

    @Test
    void shortNamesHaveOnePrefix() {
        assertThat(prod.prefixes()).containsExactly("prod");
    }

    @Test
    void namesThatAreNoHostNameLabelGetTheK8sPrefix() {
        assertThat(CksNodeNames.of("1st-cluster", "x").prefixes()).containsExactly("k8s-1st-cluster");
        assertThat(CksNodeNames.of("my_cluster", "x").prefixes()).containsExactly("k8s-mycluster");
        assertThat(CksNodeNames.of("My Cluster", "x").prefixes()).containsExactly("k8s-mycluster");
        assertThat(CksNodeNames.of("prod-", "x").prefixes()).containsExactly("k8s-prod-");
        assertThat(CksNodeNames.of("1st-cluster", "x").roleOf("k8s-1st-cluster-node-18c2f3a9b1")).contains(Role.NODE);
        assertThat(CksNodeNames.of("1st-cluster", "x").roleOf("1st-cluster-node-18c2f3a9b1")).isEmpty();
    }

    @Test
    void aNameWithNothingUsableFallsBackToTheClusterId() {
        assertThat(CksNodeNames.of("???", "8A1E7C2E-aaaa").prefixes()).containsExactly("k8s-8a1e7c2e-aaaa");
    }

    @Test
    void theK8sFallbackIsCutToo() {
        String name = "_" + "x".repeat(60);
        assertThat(CksNodeNames.of(name, "id").prefixes())
                .containsExactly(("k8s-" + "x".repeat(60)).substring(0, 43), ("k8s-" + "x".repeat(60)).substring(0, 40));
    }

    @Test
    void aNameTooLongForALabelIsMatchedUnderBothReadings() {
        String name = "analytics-" + "x".repeat(60);
        CksNodeNames names = CksNodeNames.of(name, "id");
        assertThat(names.roleOf(name.substring(0, 43) + "-node-18c2f3a9b1")).contains(Role.NODE);
        assertThat(names.roleOf(("k8s-" + name).substring(0, 43) + "-node-18c2f3a9b1")).contains(Role.NODE);
        assertThat(names.roleOf(("k8s-" + name).substring(0, 40) + "-node-18c2f3a9b1")).contains(Role.NODE);
    }

    @Test
    void theKeywordIsContainedInEveryPossibleName() {
        assertThat(prod.keyword()).isEqualTo("prod");
        String longName = "a-very-long-cluster-name-for-the-analytics-team-eu";
        assertThat(CksNodeNames.of(longName, "x").keyword()).isEqualTo(longName.substring(0, 40));
        String tooLong = "analytics-" + "x".repeat(60);
        CksNodeNames names = CksNodeNames.of(tooLong, "id");
        assertThat(names.prefixes()).allSatisfy(prefix -> assertThat(prefix).contains(names.keyword()));
        assertThat(names.keyword()).isEqualTo(tooLong.substring(0, 36));
    }
}
