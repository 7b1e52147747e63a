/**
 * The drop-ins for libibverbs' example programs: {@code rc-pingpong}, {@code uc-pingpong}, {@code ud-pingpong} and
 * {@code srq-pingpong}, with {@code ibv_*_pingpong}'s flags, their TCP exchange of endpoints in the C tools' wire
 * format, their loops and their two lines of report, interoperable with the C tools in both roles.
 *
 * <p>Threading: a command runs on the calling thread; with {@code -e} its completions come through the completion
 * channel on that thread too, as in the C tools.
 */
package dev.rdma4j.tools.pingpong;
