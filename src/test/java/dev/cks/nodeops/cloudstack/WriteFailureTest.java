package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.cks.nodeops.cloudstack.CloudStackException.Kind;

class WriteFailureTest {
    @ParameterizedTest(name = "{0} HTTP {1} errorcode {2} unsent={3}: {4}")
    @CsvSource(nullValues = "-", value = {
            // CloudStack's own refusals come before the command runs
            "API_ERROR, 431, 431, false, REFUSED",
            "API_ERROR, 432, 432, false, REFUSED",
            "API_ERROR, 401, 401, false, REFUSED",
            "API_ERROR, 531, 531, false, REFUSED",
            "API_ERROR, 429, 429, false, REFUSED_FOR_NOW",
            // an error CloudStack could not classify may come after the work began
            "API_ERROR, 530, 530, false, UNKNOWN",
            // a proxy's pages
            "HTTP_ERROR, 502, -, false, UNKNOWN",
            "HTTP_ERROR, 504, -, false, UNKNOWN",
            "HTTP_ERROR, 200, -, false, UNKNOWN",
            "HTTP_ERROR, 429, -, false, REFUSED_FOR_NOW",
            "HTTP_ERROR, 408, -, false, REFUSED_FOR_NOW",
            "HTTP_ERROR, 403, -, false, REFUSED",
            "HTTP_ERROR, 302, -, false, REFUSED",
            // no answer at all
            "TRANSPORT_ERROR, -1, -, true, REFUSED_FOR_NOW",
            "TRANSPORT_ERROR, -1, -, false, UNKNOWN",
            "JOB_TIMEOUT, 200, -, false, UNKNOWN",
            "JOB_FAILED, 200, 530, false, REFUSED"})
    void onlyARefusalBeforeExecutionIsCertain(Kind kind, int status, Integer errorCode, boolean neverSent, WriteFailure expected) {
        CloudStackException failure = new CloudStackException(kind, "scaleKubernetesCluster", status, errorCode, null, "text", null, null);
        if (neverSent) {
            failure.markRequestNeverSent();
        }
        assertThat(WriteFailure.of(failure)).isEqualTo(expected);
        assertThat(failure.outcomeUnknown()).isEqualTo(expected == WriteFailure.UNKNOWN);
    }
}
