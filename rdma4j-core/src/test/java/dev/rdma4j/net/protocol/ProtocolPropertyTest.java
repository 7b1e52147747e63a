package dev.rdma4j.net.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Two peers wired together in memory, each driving {@link Credits}, {@link SendSlots}, {@link Rendezvous} and
 * {@link Immediate} as the transports do: {@code net.RdmaConnection} ({@link Mode#STAGED}: a message waits in its
 * send buffer for a credit, credits are granted by a first message) and rdma4j-netty's pipe ({@link Mode#PIPE}: a
 * message takes a buffer only when it can go, credits are known from the connection's private data, large writes go
 * by rendezvous). Any interleaving of sends, arrivals, send completions, reads, takes and releases must keep the
 * receives a peer posted at least what the other may send (never a send without a receive: no RNR), deliver in order,
 * and, once both sides keep running, deliver everything (no deadlock).
 */
class ProtocolPropertyTest {
    enum Mode { STAGED, PIPE }

    enum Kind { SEND, SEND_LARGE, ARRIVE, COMPLETE, READ_DONE, TAKE, RELEASE }

    record Step(int side, Kind kind) {
    }

    /** A message on the wire: its sequence number (-1: no data), immediate and the sender's buffer (-1: none). */
    record Wire(int seq, int imm, int slot) {
    }

    record Out(int seq, boolean large) {
    }

    /** An arrived data message: ready unless it is a rendezvous whose read is not done. */
    static final class In {
        final int seq;
        final boolean rendezvous;
        boolean ready;

        In(int seq, boolean rendezvous) {
            this.seq = seq;
            this.rendezvous = rendezvous;
            this.ready = !rendezvous;
        }
    }

    static final class Peer {
        final Mode mode;
        final String name;
        final int dataReceives;
        final Credits credits;
        final SendSlots slots;
        final Rendezvous<Integer, In> rendezvous = new Rendezvous<>();
        final int[] slotSeq;
        final ArrayDeque<Out> pending = new ArrayDeque<>();
        /** Toward the other peer, in order. */
        final ArrayDeque<Wire> wire = new ArrayDeque<>();
        /** This side's send completions not yet handled (buffer, or -1). */
        final ArrayDeque<Integer> completions = new ArrayDeque<>();
        final ArrayDeque<In> inbox = new ArrayDeque<>();
        final List<Integer> delivered = new ArrayList<>();
        Peer other;
        int posted;
        int held;
        int nextSeq;
        int messagesSent;

        Peer(Mode mode, String name, int dataReceives, int sendSlots) {
            this.mode = mode;
            this.name = name;
            this.dataReceives = dataReceives;
            this.credits = new Credits(dataReceives);
            this.slots = new SendSlots(sendSlots);
            this.slotSeq = new int[sendSlots];
            this.posted = dataReceives + Credits.CONTROL_RECEIVES;
        }

        void start() {
            if (mode == Mode.PIPE) { // the private data told each side the other's receive count
                credits.peerGranted(other.dataReceives);
                credits.peerKnows(dataReceives);
            } else { // a first message grants them
                for (int i = 0; i < dataReceives; i++) {
                    credits.reposted(true);
                }
            }
            pump();
        }

        void send(boolean large) {
            Out o = new Out(nextSeq++, large && mode == Mode.PIPE);
            if (mode == Mode.PIPE) {
                pending.add(o);
                pump();
                return;
            }
            // as net's Outbox: a copy waits for a buffer (no pump), else fills one that goes at once when it is the
            // only one staged and a credit is there, the pump's loops skipped
            if (!slots.hasFree() || !pending.isEmpty()) {
                pending.add(o);
                return;
            }
            slotSeq[slots.fill()] = o.seq();
            if (Staging.postsAtOnce(slots, credits)) {
                int slot = slots.post();
                credits.spendData();
                transmit(new Wire(slotSeq[slot], credits.takeGrants(0), slot));
                pumpAfter(credits.creditMessageDue());
            } else {
                pump();
            }
        }

        /**
         * After an event: the pipe pumps after every one; net's Outbox only when the event may have enabled a post
         * ({@code mayPost}, its own test), which this model checks loses nothing.
         */
        void pumpAfter(boolean mayPost) {
            if (mode == Mode.PIPE || mayPost) {
                pump();
            }
        }

        /** What a transport does after any event: posts what credits allow, then credits if due. */
        void pump() {
            if (mode == Mode.STAGED) {
                while (!pending.isEmpty() && slots.hasFree()) {
                    slotSeq[slots.fill()] = pending.poll().seq();
                }
                while (slots.hasStaged() && credits.canSendData()) {
                    int slot = slots.post();
                    credits.spendData();
                    transmit(new Wire(slotSeq[slot], credits.takeGrants(0), slot));
                }
            } else {
                while (!pending.isEmpty() && credits.canSendData() && slots.hasFree()) {
                    Out o = pending.peek();
                    if (o.large() && !rendezvous.canAnnounce()) {
                        break;
                    }
                    pending.poll();
                    int slot = slots.fill();
                    slotSeq[slot] = o.seq();
                    assertThat(slots.post()).isEqualTo(slot);
                    credits.spendData();
                    transmit(new Wire(o.seq(), credits.takeGrants(o.large() ? Immediate.RENDEZVOUS : 0), slot));
                    if (o.large()) {
                        rendezvous.announced(o.seq());
                    }
                }
            }
            if (credits.creditMessageDue()) {
                int spend = credits.spendMark(credits.readsDoneOwed() > 0);
                if (spend >= 0) {
                    transmit(new Wire(-1, credits.takeGrants(spend), -1));
                }
            }
        }

        void transmit(Wire w) {
            wire.add(w);
            messagesSent++;
            checkNoSendWithoutReceive();
        }

        /**
         * The receives the other side posted cover everything this side may send: its credits of both kinds, what is on
         * the wire toward the other, and the grants on their way back.
         */
        void checkNoSendWithoutReceive() {
            int grantsComing = 0;
            for (Wire w : other.wire) {
                grantsComing += Immediate.dataGrants(w.imm()) + Immediate.controlGrants(w.imm());
            }
            assertThat(other.posted).as("%s's posted receives cover what %s may send (%s, %d on the wire, %d granted"
                    + " on the way)", other.name, name, credits, wire.size(), grantsComing)
                    .isGreaterThanOrEqualTo(credits.sendCredits() + credits.controlCredits() + wire.size()
                            + grantsComing);
        }

        /** The oldest message toward the other side arrives there (the receive it needs must be posted). */
        boolean arrive() {
            Wire w = wire.poll();
            if (w == null) {
                return false;
            }
            Peer o = other;
            assertThat(o.posted).as("a receive posted at %s for %s's message (else RNR)", o.name, name).isPositive();
            o.posted--;
            completions.add(w.slot()); // acknowledged: the send completes
            o.credits.received(w.imm());
            for (int n = Immediate.readsDone(w.imm()); n > 0; n--) {
                assertThat(o.rendezvous.readByPeer()).as("a rendezvous read that %s announced", o.name).isNotNull();
            }
            if (!Immediate.isData(w.imm())) {
                o.repost(false);
            } else if (w.seq() < 0) {
                o.repost(true); // a mark that spent a data credit: its buffer goes back at once
            } else {
                In in = new In(w.seq(), Immediate.isRendezvous(w.imm()));
                o.inbox.add(in);
                if (in.rendezvous) {
                    o.rendezvous.peerAnnounced(in);
                    while (o.rendezvous.startRead() != null) {
                        // posted: completes with READ_DONE
                    }
                }
            }
            o.pumpAfter(Staging.mayPostAfterArrival(o.slots, o.credits));
            return true;
        }

        void repost(boolean data) {
            posted++;
            credits.reposted(data);
        }

        boolean complete() {
            Integer slot = completions.poll();
            if (slot == null) {
                return false;
            }
            if (slot >= 0) {
                slots.done(slot);
            }
            pumpAfter(!pending.isEmpty()); // a freed buffer changes no credit
            return true;
        }

        boolean readDone() {
            In in = rendezvous.readCompleted();
            if (in == null) {
                return false;
            }
            in.ready = true;
            credits.readDone();
            while (rendezvous.startRead() != null) {
                // the next one waiting
            }
            pump();
            return true;
        }

        boolean take() {
            In in = inbox.peek();
            if (in == null || !in.ready) {
                return false;
            }
            inbox.poll();
            assertThat(in.seq).as("%s delivers in order", name).isEqualTo(delivered.size());
            delivered.add(in.seq);
            if (in.rendezvous) {
                repost(true); // the bytes are in a buffer of their own: the announcement's goes back
            } else {
                held++;
            }
            pumpAfter(false); // a take changes nothing the pump looks at (the rendezvous' repost is the pipe's)
            return true;
        }

        boolean release() {
            if (held == 0) {
                return false;
            }
            held--;
            repost(true);
            pumpAfter(Staging.mayPostAfterRelease(credits));
            return true;
        }

        boolean step(Kind k) {
            return switch (k) {
                case SEND -> {
                    send(false);
                    yield true;
                }
                case SEND_LARGE -> {
                    send(true);
                    yield true;
                }
                case ARRIVE -> arrive();
                case COMPLETE -> complete();
                case READ_DONE -> readDone();
                case TAKE -> take();
                case RELEASE -> release();
            };
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        return Combinators.combine(Arbitraries.integers().between(0, 1), Arbitraries.of(Kind.class)).as(Step::new)
                .list().ofMaxSize(400);
    }

    @Property(tries = 3000)
    void anyInterleavingKeepsOrderNeverOutrunsTheReceivesAndDeliversEverything(@ForAll("steps") List<Step> steps,
            @ForAll Mode mode, @ForAll @IntRange(min = 1, max = 5) int receivesA,
            @ForAll @IntRange(min = 1, max = 5) int receivesB, @ForAll @IntRange(min = 1, max = 4) int slotsA,
            @ForAll @IntRange(min = 1, max = 4) int slotsB) {
        Peer a = new Peer(mode, "A", receivesA, slotsA);
        Peer b = new Peer(mode, "B", receivesB, slotsB);
        a.other = b;
        b.other = a;
        a.start();
        b.start();
        Peer[] peers = {a, b};
        for (Step s : steps) {
            peers[s.side()].step(s.kind());
            a.checkNoSendWithoutReceive();
            b.checkNoSendWithoutReceive();
        }
        // both sides keep running: every enabled step, round after round, until nothing moves
        int rounds = 0;
        boolean moved = true;
        while (moved) {
            assertThat(++rounds).as("the peers settle (no livelock)").isLessThan(100_000);
            moved = false;
            for (Peer p : peers) {
                for (Kind k : new Kind[] {Kind.ARRIVE, Kind.COMPLETE, Kind.READ_DONE, Kind.TAKE, Kind.RELEASE}) {
                    moved |= p.step(k);
                }
                p.checkNoSendWithoutReceive();
            }
        }
        for (Peer p : peers) {
            assertThat(p.pending).as("%s's messages waiting for a buffer or credit (%s, %s)", p.name, p.credits,
                    p.slots).isEmpty();
            assertThat(p.slots.isIdle()).as("%s's send buffers are all free (%s)", p.name, p.slots).isTrue();
            assertThat(p.other.delivered).as("everything %s sent was delivered, in order", p.name)
                    .hasSize(p.nextSeq);
            assertThat(p.rendezvous.unread()).as("%s's rendezvous all read", p.name).isZero();
            assertThat(p.posted).as("%s's receives all posted again", p.name)
                    .isEqualTo(p.dataReceives + Credits.CONTROL_RECEIVES);
        }
    }

    /** A long one-way stream with the smallest buffers: credit messages keep it going, a few per receive count. */
    @Property(tries = 50)
    void aOneWayStreamNeedsFewCreditMessages(@ForAll Mode mode, @ForAll @IntRange(min = 1, max = 8) int receives) {
        Peer a = new Peer(mode, "A", 4, 4);
        Peer b = new Peer(mode, "B", receives, 1);
        a.other = b;
        b.other = a;
        a.start();
        b.start();
        int n = 1000;
        for (int i = 0; i < n; i++) {
            a.send(false);
            while (a.arrive() | b.arrive() | a.complete() | b.complete() | b.take() | b.release()) {
                // run until quiet
            }
        }
        assertThat(b.delivered).hasSize(n);
        // every credit message grants at least half the receive buffers, or the last ones the sender waits for
        assertThat(b.messagesSent).as("B's credit-only messages for %d messages into %d receives", n, receives)
                .isLessThanOrEqualTo(n / Math.max(1, receives / 2) + 2);
    }
}
