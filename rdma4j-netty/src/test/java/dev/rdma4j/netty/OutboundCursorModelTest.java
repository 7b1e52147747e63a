package dev.rdma4j.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Drives {@link OutboundCursor} as {@code RdmaPipe.write} does, with random writes (empty ones too, some held by
 * others so their pieces wait), zero-copy pieces and packed copies, a send queue 8 deep and completions in order, and
 * checks that the bytes posted are the stream exactly, that promises complete in order, only after their bytes were
 * posted, and only after the waiting send carrying them completed (a review's model: it failed at seed 5 before the
 * fix of a partly posted buffer's offset).
 */
class OutboundCursorModelTest {
    static final int S = 64; // message size
    static final int DEPTH = 8;

    record Msg(boolean waits, long start, long end) {}

    @Test
    void randomStreamsArePostedExactlyOnceInOrder() throws Exception {
        for (int seed = 0; seed < 400; seed++) {
            run(seed);
        }
    }

    private void run(int seed) throws Exception {
        Random rnd = new Random(seed);
        EmbeddedChannel channel = new EmbeddedChannel();
        ChannelOutboundBuffer in = channel.unsafe().outboundBuffer();
        List<ChannelPromise> promises = new ArrayList<>();
        List<Long> ends = new ArrayList<>();
        List<ByteBuf> bufs = new ArrayList<>();
        Set<ByteBuf> shared = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        long total = 0;
        OutboundCursor c = new OutboundCursor(DEPTH);
        ArrayDeque<Msg> flight = new ArrayDeque<>();
        int writes = 5 + rnd.nextInt(30);
        for (int step = 0; step < 400; step++) {
            if (writes > 0 && rnd.nextInt(3) == 0) {
                writes--;
                int n = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(5) == 0 ? 100 + rnd.nextInt(300) : 1 + rnd.nextInt(20);
                ByteBuf b = Unpooled.buffer(n);
                for (int i = 0; i < n; i++) {
                    b.writeByte((int) ((total + i) % 251));
                }
                total += n;
                ChannelPromise p = channel.newPromise();
                in.addMessage(b, n, p);
                in.addFlush();
                promises.add(p);
                ends.add(total);
                bufs.add(b);
                if (rnd.nextBoolean()) {
                    shared.add(b);
                }
            }
            if (rnd.nextBoolean() && !flight.isEmpty()) { // completions, in order
                int k = 1 + rnd.nextInt(flight.size());
                for (int i = 0; i < k; i++) {
                    Msg m = flight.poll();
                    if (m.waits()) {
                        c.sent();
                    }
                }
            }
            // a write pass
            c.begin(in);
            int budget = rnd.nextInt(4);
            while (flight.size() < DEPTH && budget-- > 0) {
                ByteBuf b = c.current();
                if (b == null) {
                    break;
                }
                int off = c.offset();
                if (b.readableBytes() - off >= 16 && rnd.nextBoolean()) { // zero-copy piece
                    int len = Math.min(b.readableBytes() - off, S);
                    boolean waits = shared.contains(b);
                    byte[] d = new byte[len];
                    b.getBytes(b.readerIndex() + off, d);
                    long st = sent.size();
                    sent.write(d);
                    c.take(len, waits);
                    c.posted(waits);
                    flight.add(new Msg(waits, st, sent.size()));
                    continue;
                }
                long st = sent.size();
                int room = S;
                while (room > 0 && (b = c.current()) != null) {
                    off = c.offset();
                    int t = Math.min(b.readableBytes() - off, room);
                    byte[] d = new byte[t];
                    b.getBytes(b.readerIndex() + off, d);
                    sent.write(d);
                    room -= t;
                    c.take(t, false);
                }
                c.posted(false);
                flight.add(new Msg(false, st, sent.size()));
            }
            c.end();
            // check the stream so far
            byte[] s = sent.toByteArray();
            for (int i = 0; i < s.length; i++) {
                assertThat(s[i] & 0xff).as("seed %d byte %d", seed, i).isEqualTo(i % 251);
            }
            // a write is done only if its bytes were all sent, and in order
            boolean seenUndone = false;
            long waitFrom = Long.MAX_VALUE;
            for (Msg m : flight) {
                if (m.waits()) {
                    waitFrom = Math.min(waitFrom, m.start());
                }
            }
            for (int i = 0; i < promises.size(); i++) {
                boolean done = promises.get(i).isDone();
                if (done) {
                    assertThat(seenUndone).as("seed %d: write %d done after an undone one", seed, i).isFalse();
                    assertThat(ends.get(i)).as("seed %d: write %d done before sent", seed, i).isLessThanOrEqualTo(s.length);
                    assertThat(ends.get(i)).as("seed %d: write %d done before its waiting send", seed, i)
                            .isLessThanOrEqualTo(waitFrom);
                } else {
                    seenUndone = true;
                }
            }
        }
        channel.finishAndReleaseAll();
    }
}
