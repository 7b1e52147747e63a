/*
 * poll.c: libicount-poll.so, preloaded (LD_PRELOAD) into the programs scripts/perf-compare --icount measures,
 * C's and rdma4j's alike, so that the instruction count leaves out busy polling's empty polls.
 *
 * A program that busy-polls a CQ executes an empty poll again and again until its completion arrives; how many
 * depends on how long the peer, the kernel and the emulator take, not on the program's own code, so counting
 * them would turn an instruction count back into a clock. This library wraps the provider's poll_cq: when rxe
 * creates a CQ it calls libibverbs' ibv_cmd_create_cq, which this library interposes to replace the context's
 * ops.poll_cq (what ibv_poll_cq calls, and what rdma4j reads when it creates its CQ) with a function that
 * executes the poll mark before the real poll and the empty mark after one that found nothing. The plugin
 * (icount.c) then leaves out, per vCPU, the user-space instructions from an empty poll's start to the start of
 * the next poll (the busy loop's round), unless the kernel ran on that vCPU in between.
 *
 * The prototype of ibv_cmd_create_cq is rdma-core's (providers' driver.h, which Debian does not package);
 * the symbol version is libibverbs' private one of this rdma-core (poll.map).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <infiniband/verbs.h>

typedef int (*poll_fn)(struct ibv_cq *cq, int entries, struct ibv_wc *wc);
typedef int (*create_cq_fn)(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		int comp_vector, struct ibv_cq *cq, void *cmd, size_t cmd_size, void *resp, size_t resp_size);

static poll_fn real_poll;

static int marked_poll(struct ibv_cq *cq, int entries, struct ibv_wc *wc)
{
	int n;
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x03, 0x4a, 0x34, 0x52" ::: "memory"); /* poll */
	n = real_poll(cq, entries, wc);
	if (n == 0)
		__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x04, 0x4a, 0x34, 0x52" ::: "memory"); /* empty */
	return n;
}

__attribute__((visibility("default"))) int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		struct ibv_comp_channel *channel, int comp_vector, struct ibv_cq *cq, void *cmd, size_t cmd_size,
		void *resp, size_t resp_size)
{
	static create_cq_fn real;
	if (!real) {
		/* libibverbs' own definition, from its handle: a JVM loads libibverbs without RTLD_GLOBAL, out of
		 * RTLD_NEXT's reach */
		void *verbs = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (verbs)
			real = (create_cq_fn)dlvsym(verbs, "ibv_cmd_create_cq", "IBVERBS_PRIVATE_34");
		if (!real) {
			fprintf(stderr, "libicount-poll: libibverbs' ibv_cmd_create_cq (IBVERBS_PRIVATE_34) not found\n");
			return ENOSYS;
		}
	}
	if (context->ops.poll_cq != marked_poll) {
		real_poll = context->ops.poll_cq;
		context->ops.poll_cq = marked_poll;
	}
	return real(context, cqe, channel, comp_vector, cq, cmd, cmd_size, resp, resp_size);
}
