/**
 * {@code bin/rdma4j perf} and {@code net-pingpong}: perftest's latency and bandwidth tests ({@code send_lat},
 * {@code write_bw}, ...) with its flags and report, the short path's ping-pong, and the marks around measured loops
 * that {@code scripts/perf-compare --icount} counts instructions between.
 *
 * <p>Threading: a test runs its loop on the calling thread (or, in event mode, on its engine's thread); results and
 * parameters are immutable.
 */
package dev.rdma4j.tools.perf;
