/**
 * Not API: the only room that knows C. The downcall handles of libibverbs, librdmacm and libc, the C structs'
 * layouts with their members' offsets (checked against the C headers by gcc in {@code LayoutConformanceTest}),
 * the constants, and the views that read and write {@code ibv_send_wr}, {@code ibv_wc} and friends in place.
 *
 * <p>Threading: static functions with no state of their own (handles and layouts are made once, at class
 * initialisation); each call works on the memory its caller passes, under the caller's rules.
 */
package dev.rdma4j.internal.ffi;
