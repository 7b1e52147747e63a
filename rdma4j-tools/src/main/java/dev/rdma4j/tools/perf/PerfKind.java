package dev.rdma4j.tools.perf;

import java.util.Locale;

/**
 * The kinds of test of {@code rdma4j perf}, each with the meaning of perftest's {@code ib_*} tool of the same
 * name: what it measures, how a latency is derived from a round trip, its defaults and which side prints results.
 */
public enum PerfKind {
    /** {@code ib_send_lat}: send/receive ping-pong; half a round trip; both sides report. */
    SEND_LAT("Send Latency Test", Verb.SEND, true),
    /** {@code ib_send_bw}: streams of sends into posted receives; both sides report. */
    SEND_BW("Send BW Test", Verb.SEND, false),
    /** {@code ib_write_lat}: RDMA write ping-pong, each side polls the last byte of its buffer; half a round trip. */
    WRITE_LAT("RDMA_Write Latency Test", Verb.WRITE, true),
    /** {@code ib_write_bw}: streams of RDMA writes; the client reports. */
    WRITE_BW("RDMA_Write BW Test", Verb.WRITE, false),
    /** {@code ib_read_lat}: one RDMA read at a time; a full round trip; the client reports. */
    READ_LAT("RDMA_Read Latency Test", Verb.READ, true),
    /** {@code ib_read_bw}: streams of RDMA reads; the client reports. */
    READ_BW("RDMA_Read BW Test", Verb.READ, false),
    /** {@code ib_atomic_lat}: one 8-byte atomic (CAS or FAA) at a time; a full round trip; the client reports. */
    ATOMIC_LAT("Atomic FETCH_AND_ADD Latency Test", Verb.ATOMIC, true);

    /** The operation a test posts. */
    public enum Verb {
        /** Send/receive. */
        SEND,
        /** RDMA write. */
        WRITE,
        /** RDMA read. */
        READ,
        /** An 8-byte atomic. */
        ATOMIC
    }

    private final String title;
    private final Verb verb;
    private final boolean latency;

    PerfKind(String title, Verb verb, boolean latency) {
        this.title = title;
        this.verb = verb;
        this.latency = latency;
    }

    /**
     * The name on the command line: {@code send_lat}, {@code write_bw}, ...
     *
     * @return the name
     */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The test for a command-line name.
     *
     * @param name e.g. {@code write_bw} (case-insensitive; {@code ib_} in front is accepted)
     * @return the test
     * @throws IllegalArgumentException for an unknown name
     */
    public static PerfKind of(String name) {
        String n = name.toLowerCase(Locale.ROOT).replace('-', '_');
        if (n.startsWith("ib_")) {
            n = n.substring(3);
        }
        for (PerfKind t : values()) {
            if (t.cliName().equals(n)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown test '" + name + "' (one of send_lat, send_bw, write_lat, "
                + "write_bw, read_lat, read_bw, atomic_lat)");
    }

    /**
     * The banner's title, as perftest prints it.
     *
     * @param atomic the atomic operation (atomic tests only)
     * @return e.g. "Send Latency Test"
     */
    public String title(AtomicOp atomic) {
        return verb == Verb.ATOMIC ? "Atomic " + atomic.name() + " Latency Test" : title;
    }

    /**
     * The operation.
     *
     * @return the verb
     */
    public Verb verb() {
        return verb;
    }

    /**
     * A latency test (else a bandwidth test).
     *
     * @return whether the table is one of latencies
     */
    public boolean isLatency() {
        return latency;
    }

    /**
     * What a measured interval is divided by: a ping-pong interval is a round trip of which the latency is half
     * (send, write); a read or atomic completes after one round trip, which is the latency.
     *
     * @return 2 or 1
     */
    public int rttFactor() {
        return verb == Verb.READ || verb == Verb.ATOMIC ? 1 : 2;
    }

    /**
     * Whether the server runs the data path too and prints a table (send tests and write_lat) rather than only
     * exposing its memory (one-sided bandwidth tests, read and atomic latency).
     *
     * @return whether the server reports
     */
    public boolean serverReports() {
        return verb == Verb.SEND || this == WRITE_LAT;
    }

    /**
     * perftest's default message size: 2 bytes for latency, 64 KiB for bandwidth, 8 for atomics.
     *
     * @return bytes
     */
    public long defaultSize() {
        return verb == Verb.ATOMIC ? 8 : latency ? 2 : 65536;
    }

    /**
     * perftest's default iterations: 1000 for latency, 5000 for bandwidth.
     *
     * @return iterations
     */
    public long defaultIterations() {
        return latency ? 1000 : 5000;
    }

    /**
     * perftest's default send queue depth: 1 for latency tests, 128 for bandwidth tests.
     *
     * @return the depth
     */
    public int defaultTxDepth() {
        return latency ? 1 : 128;
    }

    /**
     * perftest's default inline size: 236 bytes for send latency, 220 for write latency, none otherwise.
     *
     * @return bytes
     */
    public int defaultInline() {
        return this == SEND_LAT ? 236 : this == WRITE_LAT ? 220 : 0;
    }

    /** The atomic operation of {@code atomic_lat} ({@code -A}). */
    public enum AtomicOp {
        /** {@code IBV_WR_ATOMIC_CMP_AND_SWP}. */
        CMP_AND_SWAP,
        /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}, perftest's default. */
        FETCH_AND_ADD
    }
}
