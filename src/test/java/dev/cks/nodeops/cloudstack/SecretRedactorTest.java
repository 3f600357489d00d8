package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SecretRedactorTest {

    private final SecretRedactor redactor = new SecretRedactor("the-api-key", "se+cret/key==");

    @Test
    void masksSecretParametersByName() {
        assertThat(redactor.redact("http://cs/client/api?command=listZones&apiKey=abc&signature=x%2Fy%3D&response=json"))
                .isEqualTo("http://cs/client/api?command=listZones&apiKey=***&signature=***&response=json");
        assertThat(redactor.redact("{\"secretkey\":\"zzz\", \"name\":\"n\"}")).isEqualTo("{\"secretkey\":\"***\", \"name\":\"n\"}");
        assertThat(redactor.redact("api-key = k1\nsecret-key = k2")).isEqualTo("api-key = ***\nsecret-key = ***");
    }

    @Test
    void masksKnownKeysWhereverTheyAppearPlainOrEncoded() {
        assertThat(redactor.redact("user the-api-key not found")).isEqualTo("user *** not found");
        assertThat(redactor.redact("echo se%2Bcret%2Fkey%3D%3D")).isEqualTo("echo ***");
    }

    @Test
    void leavesOrdinaryTextAlone() {
        assertThat(redactor.redact("listVirtualMachines failed: 530")).isEqualTo("listVirtualMachines failed: 530");
        assertThat(redactor.redact(null)).isNull();
    }
}
