package dev.rdma4j.connect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, item 10: rdma4j's private data trailer. What an rdma4j sender frames comes back with its
 * length after the CM's padding; what a C peer sends (no trailer) comes back as delivered.
 */
class PrivateDataTest {
    @Test
    void framedDataComesBackWithItsLengthAfterTheCmsPadding() {
        for (int room : new int[] {PrivateData.CONNECT, PrivateData.ACCEPT, PrivateData.REJECT}) {
            for (int n : new int[] {0, 1, 12, room - 4}) {
                byte[] sent = new byte[n];
                Arrays.fill(sent, (byte) 0x5a);
                byte[] wire = PrivateData.frame(sent, room);
                assertThat(wire).hasSize(room);
                assertThat(Arrays.copyOf(wire, n)).as("the caller's bytes first, for C peers").isEqualTo(sent);
                assertThat(PrivateData.unframe(wire)).as("%d of %d", n, room).isEqualTo(sent);
            }
        }
    }

    @Test
    void dataTooLongForTheTrailerIsSentAsGiven() {
        byte[] full = new byte[56];
        Arrays.fill(full, (byte) 1);
        assertThat(PrivateData.frame(full, PrivateData.CONNECT)).isEqualTo(full);
        assertThat(PrivateData.unframe(full)).isEqualTo(full);
    }

    @Test
    void aCPeersDataIsReturnedAsDelivered() {
        byte[] padded = new byte[56];
        padded[0] = 7;
        assertThat(PrivateData.unframe(padded)).isSameAs(padded);
        assertThat(PrivateData.unframe(new byte[0])).isEmpty();
        byte[] lookalike = new byte[56]; // ends like a trailer, but the "padding" before it is data
        lookalike[10] = 9;
        lookalike[52] = 'r';
        lookalike[53] = '4';
        lookalike[54] = 'j';
        lookalike[55] = 3;
        assertThat(PrivateData.unframe(lookalike)).isSameAs(lookalike);
        lookalike[55] = 60; // a length beyond the field
        lookalike[10] = 0;
        assertThat(PrivateData.unframe(lookalike)).isSameAs(lookalike);
    }
}
