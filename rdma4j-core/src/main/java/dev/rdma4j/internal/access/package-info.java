/**
 * Not API: the bridge from the engine and rdma_cm to the verbs' package-private members ({@code Access}), the
 * JDK's SharedSecrets pattern without its import circle: the verbs package neither implements nor names it; method
 * handles from a private lookup in the same module reach the members. Not exported by the module.
 *
 * <p>Threading: stateless; each call has the threading of the member it reaches.
 */
package dev.rdma4j.internal.access;
