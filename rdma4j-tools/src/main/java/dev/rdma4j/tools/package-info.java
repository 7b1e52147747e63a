/**
 * {@code bin/rdma4j}: the command line ({@link dev.rdma4j.tools.Main}, picocli) of the drop-ins for rdma-core's
 * tools, which take the same flags, print the same lines and interoperate with the C tools in both roles:
 * {@code devinfo} here, the ping-pongs in {@link dev.rdma4j.tools.pingpong}, {@code rping} in
 * {@link dev.rdma4j.tools.rping}, perftest's tests in {@link dev.rdma4j.tools.perf}; and the tours of
 * {@link dev.rdma4j.tools.demo}.
 *
 * <p>Threading: each command runs on the thread that calls it, with the engines it makes; nothing is shared
 * between commands.
 */
package dev.rdma4j.tools;
