/**
 * {@code bin/rdma4j demo}: narrated tours of the API on the device (the data path, the engine and futures, the
 * shared receive queue, gRPC over rdma4j-netty), each step printed with what it shows.
 *
 * <p>Threading: a tour runs on the calling thread, with the engines and event loops it makes and closes.
 */
package dev.rdma4j.tools.demo;
