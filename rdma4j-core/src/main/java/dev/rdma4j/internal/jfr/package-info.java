/**
 * Not API: rdma4j's JDK Flight Recorder events ({@code jdk.jfr}), all named {@code dev.rdma4j.*} and disabled unless
 * a recording's settings enable them (the {@code rdma4j.jfc} configuration in the core jar enables them all), and
 * {@link dev.rdma4j.internal.jfr.Flight}, the one door to them: the library's hot paths read one volatile flag
 * ({@link dev.rdma4j.internal.jfr.Flight#on}) and create no event while no recording asks for one. Takes names,
 * numbers and strings only: it names no rdma4j type (so every layer may call it). Not exported but to
 * {@code jdk.jfr}.
 *
 * <p>Threading: events are made and committed on the thread where what they record happens; the flag is written by
 * the recorder's listener and read by any thread.
 */
package dev.rdma4j.internal.jfr;
