package dev.rdma4j.connect;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Issue 10, item 9: CmException decodes the event's status (host test: no device involved). */
class CmExceptionTest {
    private static final String WHAT = "connect to /198.18.0.1:7174";

    @Test
    void aRejectWithReason8SaysNothingListensAndHidesTheCmsPadding() {
        CmException e = new CmException(WHAT, CmEventType.REJECTED, 8, new byte[148]);
        assertThat(e.getMessage()).isEqualTo("connect to /198.18.0.1:7174 failed: REJECTED (status 8: IB CM reject"
                + " reason INVALID_SERVICE_ID): no listener on that port (the peer's CM knows no such service)");
        assertThat(e.statusText()).isEqualTo("status 8: IB CM reject reason INVALID_SERVICE_ID");
        assertThat(e.privateData()).hasSize(148);
    }

    @Test
    void aRejectByThePeersApplicationShowsItsPrivateData() {
        CmException e = new CmException(WHAT, CmEventType.REJECTED, 28, "go away".getBytes());
        assertThat(e.getMessage()).isEqualTo("connect to /198.18.0.1:7174 failed: REJECTED (status 28: IB CM reject"
                + " reason CONSUMER_DEFINED): rejected by the peer (rdma_reject), 7 bytes of private data");
        assertThat(new CmException(WHAT, CmEventType.REJECTED, 99, new byte[0]).getMessage())
                .endsWith("REJECTED (status 99: IB CM reject reason unknown)");
    }

    @Test
    void aNegativeStatusIsAnErrnoWithItsNameAndText() {
        CmException e = new CmException(WHAT, CmEventType.UNREACHABLE, -110, new byte[0]);
        assertThat(e.getMessage()).isEqualTo("connect to /198.18.0.1:7174 failed: UNREACHABLE (status -110: ETIMEDOUT,"
                + " Connection timed out): no answer to the connect request (no host at that address, or no RDMA"
                + " device on it)");
        assertThat(new CmException(WHAT, CmEventType.REJECTED, -111, new byte[0]).statusText())
                .isEqualTo("status -111: ECONNREFUSED, Connection refused");
        assertThat(new CmException(WHAT, CmEventType.ADDR_ERROR, -113, new byte[0]).getMessage())
                .contains("ADDR_ERROR (status -113: EHOSTUNREACH, No route to host): address resolution");
        assertThat(new CmException(WHAT, CmEventType.ROUTE_ERROR, -4095, new byte[0]).statusText())
                .startsWith("status -4095: errno 4095, ");
    }
}
