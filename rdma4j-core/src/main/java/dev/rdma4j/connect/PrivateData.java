package dev.rdma4j.connect;

import dev.rdma4j.internal.ffi.IbCm;
import java.util.Arrays;

/**
 * rdma4j's framing of rdma_cm private data, so that a receiver sees the length its sender gave.
 *
 * <p>On InfiniBand and RoCE the IB CM carries private data in fixed-size fields and delivers them whole:
 * a connect request's 56 bytes (92 less rdma_cm's own header), an accept's 196, a reject's 148, zero-padded
 * whatever the sender passed. The length is lost on the wire. rdma4j therefore sends a field in full, the
 * caller's bytes first, zeros, and a 4-byte trailer in the field's last bytes: {@code 'r' '4' 'j' n} with
 * {@code n} the caller's length. A receiver that finds that trailer (and zeros between the data and it)
 * returns the first {@code n} bytes; anything else is returned as delivered.
 *
 * <p>Interoperability with C peers: the caller's bytes stay at offset 0, so a C peer reading its struct
 * from the private data sees them unchanged (only the padding it does not read holds the trailer); data
 * from a C peer has no trailer and comes back as the CM delivered it (56/196/148 bytes on IB/RoCE).
 * Data too long for the trailer (more than 52, 192 or 144 bytes) is sent as given, with no trailer.
 *
 * <p>Stateless, hence thread-safe.
 */
final class PrivateData {
    /** {@code rdma_connect}'s room on IB/RoCE (IB CM REQ private data less rdma_cm's header). */
    static final int CONNECT = IbCm.RDMA_CONNECT_PRIVATE_DATA_SIZE;
    /** {@code rdma_accept}'s room on IB/RoCE (IB CM REP private data). */
    static final int ACCEPT = IbCm.IB_CM_REP_PRIVATE_DATA_SIZE;
    /** {@code rdma_reject}'s room on IB/RoCE (IB CM REJ private data). */
    static final int REJECT = IbCm.IB_CM_REJ_PRIVATE_DATA_SIZE;
    static final int TRAILER = 4;

    private PrivateData() {
    }

    /** The bytes to send in a field of {@code room} bytes: framed when the trailer fits, else as given. */
    static byte[] frame(byte[] data, int room) {
        if (data.length > room - TRAILER) {
            return data.clone();
        }
        byte[] out = new byte[room];
        System.arraycopy(data, 0, out, 0, data.length);
        out[room - 4] = 'r';
        out[room - 3] = '4';
        out[room - 2] = 'j';
        out[room - 1] = (byte) data.length;
        return out;
    }

    /** What the sender gave, if {@code delivered} carries rdma4j's trailer; otherwise {@code delivered}. */
    static byte[] unframe(byte[] delivered) {
        int len = delivered.length;
        if (len < TRAILER || delivered[len - 4] != 'r' || delivered[len - 3] != '4' || delivered[len - 2] != 'j') {
            return delivered;
        }
        int n = Byte.toUnsignedInt(delivered[len - 1]);
        if (n > len - TRAILER) {
            return delivered;
        }
        for (int i = n; i < len - TRAILER; i++) {
            if (delivered[i] != 0) {
                return delivered; // not rdma4j's padding: a C peer's data that happens to end like a trailer
            }
        }
        return Arrays.copyOf(delivered, n);
    }
}
