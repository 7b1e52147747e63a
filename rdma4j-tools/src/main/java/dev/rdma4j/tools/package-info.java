/**
 * {@code bin/rdma4j}: drop-ins for rdma-core's tools ({@code devinfo}, the {@code rc/uc/ud/srq} ping-pongs) that
 * take the same flags, print the same lines and interoperate with the C tools in both roles, and the
 * {@code demo} tours of the API. {@link dev.rdma4j.tools.Main} is the command line (picocli).
 *
 * <p>Threading: each command runs on the thread that calls it, with the engines it makes; nothing is shared
 * between commands.
 */
package dev.rdma4j.tools;
