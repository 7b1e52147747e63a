package dev.rdma4j.bench;

import dev.rdma4j.ReceiveBatch;
import dev.rdma4j.RemoteRegion;
import dev.rdma4j.SendBatch;
import dev.rdma4j.VerbsException;
import dev.rdma4j.WorkCompletions;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code QueuePair.tryPost} on a loopback-connected RC queue pair: encoding, the ring and pin book-keeping
 * and {@code context->ops.post_send} (on rxe a system call per post). One request in {@value #SIGNAL_EVERY}
 * is signaled; after it the completions (and, for sends, the consumed receives) are reaped and
 * {@value #SIGNAL_EVERY} receives reposted in one chained post, so that cost is amortised over the posts.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PostDeviceBench {
    static final int SIGNAL_EVERY = 64;
    static final int DEPTH = 1024;
    private static final int ENOMEM = 12;

    private LoopbackPair lb;
    private SendBatch send;
    private ReceiveBatch recvs;
    private WorkCompletions wcs;
    private RemoteRegion remote;
    private long n;
    private int outstandingSignals;

    @Setup(Level.Trial)
    public void setUp() throws VerbsException {
        lb = new LoopbackPair(DEPTH, null);
        send = new SendBatch(1, 1);
        recvs = new ReceiveBatch(SIGNAL_EVERY, 1);
        wcs = new WorkCompletions(SIGNAL_EVERY);
        remote = lb.mr.remote();
        for (int k = 0; k < DEPTH / SIGNAL_EVERY; k++) {
            repostReceives();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws VerbsException {
        lb.a.toError(); // flush what is outstanding; closing forgets it
        lb.b.toError();
        send.close();
        recvs.close();
        wcs.close();
        lb.close();
    }

    private void repostReceives() throws VerbsException {
        recvs.clear();
        for (int i = 0; i < SIGNAL_EVERY; i++) {
            recvs.receive(i, lb.mr, 65536 + i * 64L, 64);
        }
        lb.b.post(recvs);
    }

    /** An RDMA write of 64 bytes. */
    @Benchmark
    public int tryPostWrite() throws VerbsException {
        send.clear().write(n, lb.mr, 0, 64, remote, 4096);
        return post(false);
    }

    /** A send of 64 bytes (the peer's receives are reposted every {@value #SIGNAL_EVERY} sends). */
    @Benchmark
    public int tryPostSend() throws VerbsException {
        send.clear().send(n, lb.mr, 0, 64);
        return post(true);
    }

    private int post(boolean consumesReceive) throws VerbsException {
        boolean signaled = ++n % SIGNAL_EVERY == 0;
        if (!signaled) {
            send.unsignaled();
        }
        int rc = lb.a.tryPost(send);
        if (rc != 0) {
            throw new IllegalStateException("tryPost: errno " + rc + (rc == ENOMEM ? " (send queue full)" : ""));
        }
        if (signaled) {
            outstandingSignals++;
            if (outstandingSignals >= DEPTH / SIGNAL_EVERY / 2) { // reap the older half
                LoopbackPair.await(lb.cqA, wcs, outstandingSignals);
                outstandingSignals = 0;
            }
            if (consumesReceive) {
                LoopbackPair.await(lb.cqB, wcs, SIGNAL_EVERY);
                repostReceives();
            }
        }
        return rc;
    }
}
