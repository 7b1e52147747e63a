package dev.rdma4j.tools.demo;

import dev.rdma4j.netty.RdmaChannel;
import dev.rdma4j.netty.RdmaIoHandler;
import dev.rdma4j.netty.RdmaServerChannel;
import io.grpc.CallOptions;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The demo's gRPC part: gRPC-java (grpc-netty, HTTP/2) on the rdma4j-netty transport. Bob serves a hand-made
 * service (no protobuf: {@link MethodDescriptor}s with a UTF-8 string marshaller) on an {@link RdmaServerChannel};
 * alice calls it over an {@link RdmaChannel}, one unary call and a short bidirectional stream, each with a deadline;
 * then the channel, the server and both event loops are shut down.
 *
 * <p>Threading: {@link #run()} runs on the caller's thread and blocks on the calls. The transport runs on two Netty
 * event loops, bob's and alice's, each an {@link RdmaIoHandler} (an rdma4j completion engine turned by the loop's
 * thread: epoll over the completion channels and the rdma_cm event channel); bob's handlers run on gRPC's default
 * executor, alice's stream observer on hers. What they hand to the caller's thread goes through thread-safe
 * objects (a future, a synchronized list, a copy-on-write list).
 */
final class GrpcTour {
    private static final long T = 120;
    /** The calls' deadline: in the emulated guest, connecting and the first call's class loading take seconds. */
    private static final long DEADLINE_SECONDS = 60;
    private static final String SERVICE = "rdma4j.demo.Greeter";

    /** gRPC messages as UTF-8 text: the whole message is the string. */
    private static final MethodDescriptor.Marshaller<String> UTF8 = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try (stream) {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw Status.INTERNAL.withDescription("unreadable message").withCause(e).asRuntimeException();
            }
        }
    };

    /** Unary: a name in, a greeting out. */
    private static final MethodDescriptor<String, String> HELLO = method("Hello", MethodDescriptor.MethodType.UNARY);
    /** Bidirectional streaming: each word back in capitals, in order. */
    private static final MethodDescriptor<String, String> SHOUT = method("Shout", MethodDescriptor.MethodType.BIDI_STREAMING);

    /** The address of the connection a call came in on, as bob's transport reports it. */
    private static final io.grpc.Context.Key<SocketAddress> PEER = io.grpc.Context.key("peer");

    private final InetAddress address;
    private final Narrator narrator;

    GrpcTour(InetAddress address, PrintStream out) {
        this.address = address;
        this.narrator = new Narrator(out);
    }

    boolean run() throws Exception {
        narrator.step("18. gRPC over RDMA: grpc-netty on rdma4j-netty's transport",
                "Netty 4.2 event loops of RdmaIoHandler (epoll over CQ completion channels and rdma_cm), "
                        + "RdmaServerChannel / RdmaChannel; no TCP socket");
        EventLoopGroup bobLoop = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
        EventLoopGroup aliceLoop = null;
        Server server = null;
        ManagedChannel channel = null;
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress(address, 0))
                    .channelType(RdmaServerChannel.class)
                    .bossEventLoopGroup(bobLoop)
                    .workerEventLoopGroup(bobLoop)
                    .addService(ServerInterceptors.intercept(service(), new PeerInterceptor()))
                    .build()
                    .start();
            InetSocketAddress at = new InetSocketAddress(address, server.getPort());
            narrator.say("bob serves " + SERVICE + " on " + text(at) + " (rdma_bind_addr on port 0, rdma_listen);"
                    + " methods Hello (unary) and Shout (bidi), messages UTF-8 text, no protobuf");

            aliceLoop = new MultiThreadIoEventLoopGroup(1, RdmaIoHandler.newFactory());
            List<RdmaChannel> opened = new CopyOnWriteArrayList<>();
            channel = NettyChannelBuilder.forAddress(at)
                    .channelFactory(() -> {
                        RdmaChannel c = new RdmaChannel();
                        opened.add(c);
                        return c;
                    }, InetSocketAddress.class)
                    .eventLoopGroup(aliceLoop)
                    .usePlaintext()
                    .build();
            calls(channel, opened);

            narrator.step("19. gRPC shut down", "alice's channel (shutdownNow), bob's server (shutdown), "
                    + "then both event loops with their completion engines");
            channel.shutdownNow().awaitTermination(T, TimeUnit.SECONDS);
            server.shutdown().awaitTermination(T, TimeUnit.SECONDS);
            boolean closed = channel.isTerminated() && server.isTerminated();
            for (RdmaChannel c : opened) {
                closed &= c.closeFuture().await(T, TimeUnit.SECONDS) && !c.isOpen();
            }
            narrator.verify("channel and server terminated; alice's RdmaChannel closed (rdma_disconnect)", closed);
        } finally {
            if (channel != null) {
                channel.shutdownNow().awaitTermination(T, TimeUnit.SECONDS);
            }
            if (server != null) {
                server.shutdownNow().awaitTermination(T, TimeUnit.SECONDS);
            }
            if (aliceLoop != null) {
                aliceLoop.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
            }
            bobLoop.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        }
        return narrator.allVerified();
    }

    private void calls(ManagedChannel channel, List<RdmaChannel> opened) throws Exception {
        String answer = ClientCalls.blockingUnaryCall(channel, HELLO,
                CallOptions.DEFAULT.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS), "alice");
        narrator.verify("unary call Hello(\"alice\"), deadline " + DEADLINE_SECONDS + " s: answer \"" + answer + "\"",
                answer.startsWith("hello alice, this is bob over RDMA"));
        RdmaChannel rdma = opened.isEmpty() ? null : opened.getFirst();
        boolean same = opened.size() == 1 && rdma.isActive() && answer.endsWith(" " + text(rdma.localAddress()));
        narrator.verify("the call's connection: alice's only channel, " + rdma + " (rdma_resolve_addr, "
                + "rdma_resolve_route, rdma_connect); HTTP/2 frames in SEND WITH IMM messages, credits in the "
                + "immediate", same);

        List<String> words = List.of("rdma", "verbs", "grpc");
        List<String> heard = new ArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        StreamObserver<String> up = ClientCalls.asyncBidiStreamingCall(channel.newCall(SHOUT,
                CallOptions.DEFAULT.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS)), new StreamObserver<>() {
                    @Override
                    public void onNext(String word) {
                        synchronized (heard) {
                            heard.add(word);
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(null);
                    }
                });
        for (String w : words) {
            up.onNext(w);
        }
        up.onCompleted();
        done.get(T, TimeUnit.SECONDS);
        List<String> got;
        synchronized (heard) {
            got = List.copyOf(heard);
        }
        narrator.verify("bidi stream Shout " + words + " -> " + got + ", in order, on the same connection",
                got.equals(List.of("RDMA", "VERBS", "GRPC")) && opened.size() == 1);
    }

    /** Bob's service, defined by hand: what protoc would generate, without protobuf. */
    private static ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(HELLO, ServerCalls.asyncUnaryCall((String name, StreamObserver<String> reply) -> {
                    reply.onNext("hello " + name + ", this is bob over RDMA; your call came from "
                            + text(PEER.get()));
                    reply.onCompleted();
                }))
                .addMethod(SHOUT, ServerCalls.asyncBidiStreamingCall(reply -> new StreamObserver<String>() {
                    @Override
                    public void onNext(String word) {
                        reply.onNext(word.toUpperCase(Locale.ROOT));
                    }

                    @Override
                    public void onError(Throwable t) {
                        // the client went away: nothing to answer
                    }

                    @Override
                    public void onCompleted() {
                        reply.onCompleted();
                    }
                }))
                .build();
    }

    /** Puts the remote address of the call's transport (bob's child RdmaChannel) into the call's context. */
    private static final class PeerInterceptor implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                ServerCallHandler<Q, R> next) {
            SocketAddress peer = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            return Contexts.interceptCall(io.grpc.Context.current().withValue(PEER, peer), call, headers, next);
        }
    }

    private static MethodDescriptor<String, String> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<String, String>newBuilder()
                .setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(UTF8)
                .setResponseMarshaller(UTF8)
                .build();
    }

    private static String text(SocketAddress a) {
        return a instanceof InetSocketAddress i ? i.getAddress().getHostAddress() + ":" + i.getPort()
                : String.valueOf(a);
    }
}
