package dev.rdma4j.examples;

import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The key-value service of {@link GrpcKvServer} and {@link GrpcKvClient}, defined by hand (no protoc, no protobuf):
 * {@code kv.KeyValue/Put} takes the key, a newline and the value, and answers nothing; {@code kv.KeyValue/Get}
 * takes the key and answers the value (or {@code NOT_FOUND}). Messages are byte arrays as they are.
 */
final class KeyValue {
    /** The largest message either side accepts: gRPC's default (4 MiB) is too small for a 4 MiB value and its key. */
    static final int MAX_MESSAGE = 64 << 20;

    /** Bytes as they are, both ways. */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw Status.INTERNAL.withDescription("reading a message").withCause(e).asRuntimeException();
            }
        }
    };

    static final MethodDescriptor<byte[], byte[]> PUT = method("Put");
    static final MethodDescriptor<byte[], byte[]> GET = method("Get");

    private KeyValue() {
    }

    private static MethodDescriptor<byte[], byte[]> method(String name) {
        return MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName("kv.KeyValue", name))
                .setRequestMarshaller(BYTES)
                .setResponseMarshaller(BYTES)
                .build();
    }

    /** A Put's request: the key, a newline, the value. */
    static byte[] put(String key, byte[] value) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        byte[] r = Arrays.copyOf(k, k.length + 1 + value.length);
        r[k.length] = '\n';
        System.arraycopy(value, 0, r, k.length + 1, value.length);
        return r;
    }

    /** Where a Put's key ends (its newline). */
    static int keyEnd(byte[] put) {
        for (int i = 0; i < put.length; i++) {
            if (put[i] == '\n') {
                return i;
            }
        }
        throw Status.INVALID_ARGUMENT.withDescription("a Put needs a key and a newline").asRuntimeException();
    }
}
