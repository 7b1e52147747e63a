/*
 * perftest_twin.c: perftest-twin, the C side of scripts/perf-compare --icount's latency and bandwidth cases:
 * perftest's loops (read, not copied, from perftest_resources.c: run_iter_lat_send for send_lat, run_iter_lat for
 * read_lat and atomic_lat, run_iter_lat_write for write_lat, run_iter_bw and run_iter_bw_server for write_bw and
 * send_bw), the same verbs calls in the same order, with marks around the measured iterations of its own. perftest can only be marked from outside (a whole run, start-up, connection and its
 * clock-rate sampling included), and its figure is the difference of two run lengths, which a loaded machine
 * moves by thousands of instructions an iteration; and its `ib_send_lat -e` hangs on this guest's rxe (both
 * sides blocked in ibv_get_cq_event: docs/perf/event-mode-and-cold-2026-11-25.md). scripts/perf-compare's
 * twin_check case compares this program's send_lat, write_lat, read_lat, write_bw and send_bw with perftest's.
 *
 *   perftest-twin TEST [-e] [-s SIZE] [-n ITERS] [-w WARMUP] [-p PORT] [-d DEVICE] [-i IB_PORT] [-x GID_INDEX] [SERVER]
 *
 * TEST: send_lat (-e: event mode), write_lat, read_lat or atomic_lat (FETCH_AND_ADD of 8 bytes). As perftest does
 * for RC: a send CQ and a receive CQ (with -e each on its own completion channel, armed at creation), one send
 * WR, every request signaled and its completion polled before the loop goes on, writes and sends inline up to 236
 * bytes; send_lat posts min(512, WARMUP + ITERS) receives first, reposts one while later messages still need it,
 * and the client sends first; write_lat spins on the last byte of its buffer until the peer's write of iteration
 * i set it to (char) i, then writes its own; read_lat and atomic_lat run on the client alone. Both sides run
 * WARMUP + ITERS iterations; the client marks (rdma4j_icount_start/stop, marks.c) from its post of the first
 * measured request to the end of its loop, so the plugin's window / ITERS is an iteration of the pair.
 * With -e, waiting is perftest's ctx_notify_events (ibv_get_cq_event, ibv_ack_cq_events, ibv_req_notify_cq)
 * followed by a poll, and one thing more than perftest: a poll that finds nothing waits for the next event
 * instead of going on without the completion (the step where perftest's -e loses one and blocks for good).
 * write_bw and send_bw are perftest's run_iter_bw (the client) and run_iter_bw_server (send_bw's server; write_bw's
 * has no loop) as perftest 4.5 runs them on rxe: an extended QP posted through ibv_wr_start / ibv_wr_rdma_write or
 * ibv_wr_send / ibv_wr_set_sge / ibv_wr_complete (perftest's flow where rdma-core has it), no inline data, up to
 * 128 requests outstanding, one in 100 signaled (every one above 8 KiB), completions polled 16 at a time, a time
 * stamp per post and per completion, addresses stepping through a page when a message fits in it twice, 512
 * receives posted first and one posted again per completion. A warm-up run of WARMUP messages, a byte each way,
 * then the measured run of ITERS between the client's marks.
 * The QPs' endpoints (LID, QPN, PSN, GID, buffer address and rkey) go over TCP; a last byte each way ends the run
 * on both sides at once.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <sys/socket.h>

void rdma4j_icount_start(void);
void rdma4j_icount_stop(void);
void rdma4j_icount_poll(void);
void rdma4j_icount_empty(void);

#define INLINE_SIZE 236 /* perftest's DEF_INLINE_SEND_RC_UC */
#define RX_DEPTH 512    /* perftest's DEF_RX_SEND */
#define TX_DEPTH 128    /* perftest's DEF_TX_BW */
#define CQ_MOD 100      /* perftest's DEF_CQ_MOD: one signaled request in 100; every one above 8 KiB */
#define CQ_MOD_LIMIT 8192 /* perftest's MSG_SIZE_CQ_MOD_LIMIT */
#define POLL_BATCH 16   /* perftest's CTX_POLL_BATCH */
#define CYCLE 4096      /* perftest's cycle_buffer (the page): addresses move through it when a message fits twice */

enum test { SEND_LAT, WRITE_LAT, READ_LAT, ATOMIC_LAT, WRITE_BW, SEND_BW };

static struct {
	enum test test;
	int event, ib_port, gid_index;
	unsigned size, port;
	unsigned long iters, warmup;
	const char *device, *server;
} opt = {.size = 64, .iters = 1000, .warmup = 1000, .port = 18515, .ib_port = 1, .gid_index = 1};

struct endpoint {
	uint32_t lid, qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

static void die(const char *what)
{
	fprintf(stderr, "perftest-twin: %s: %s\n", what, strerror(errno ? errno : EIO));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: perftest-twin send_lat|write_lat|read_lat|atomic_lat|write_bw|send_bw [-e] [-s SIZE] [-n ITERS] [-w WARMUP] [-p PORT] [-d DEVICE] [-i IB_PORT]"
			" [-x GID_INDEX] [SERVER]\n");
	exit(2);
}

static void full(int fd, void *buf, size_t len, int writing)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
		if (n <= 0) {
			errno = n == 0 ? EPIPE : errno;
			die(writing ? "write to peer" : "read from peer");
		}
		p += n;
		len -= n;
	}
}

static int tcp_connect(void)
{
	char service[16];
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
	int fd, one = 1;
	snprintf(service, sizeof service, "%u", opt.port);
	if (getaddrinfo(opt.server, service, &hints, &ai) != 0)
		die("getaddrinfo");
	fd = socket(ai->ai_family, ai->ai_socktype, 0);
	if (fd < 0)
		die("socket");
	if (opt.server) {
		/* the server may still be starting: retry for 60 s */
		for (int tries = 0; connect(fd, ai->ai_addr, ai->ai_addrlen) != 0; tries++) {
			if (tries == 600)
				die("connect");
			close(fd);
			nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);
			fd = socket(ai->ai_family, ai->ai_socktype, 0);
		}
	} else {
		int lfd = fd;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(lfd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(lfd, 1) != 0)
			die("listen");
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			die("accept");
		close(lfd);
	}
	freeaddrinfo(ai);
	return fd;
}

/* perftest's ctx_notify_events: the next event of the channel, acknowledged, and the CQ armed again */
static void await_event(struct ibv_comp_channel *channel)
{
	struct ibv_cq *cq;
	void *cq_context;
	if (ibv_get_cq_event(channel, &cq, &cq_context))
		die("ibv_get_cq_event");
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(cq, 0))
		die("ibv_req_notify_cq");
}

/* one completion of CQ: polled until it comes (busy), or after each event (-e) */
static void take(struct ibv_cq *cq, struct ibv_comp_channel *channel, struct ibv_wc *wc, const char *what)
{
	int n;
	do {
		if (channel)
			await_event(channel);
		n = ibv_poll_cq(cq, 1, wc);
	} while (n == 0);
	if (n < 0) {
		errno = EIO;
		die(what);
	}
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "perftest-twin: %s completion: %s\n", what, ibv_wc_status_str(wc->status));
		exit(1);
	}
}

/* perftest's address step (increase_loc_addr, increase_rem_addr): the next message's place in the cycle buffer */
static uint64_t next_addr(uint64_t addr, uint64_t base, unsigned long count)
{
	unsigned inc = (opt.size + 63) / 64 * 64; /* INC(size, cache line) */
	addr += inc;
	return (count + 1) % (CYCLE / inc) == 0 ? base : addr;
}

/* up to POLL_BATCH completions of CQ, every one a success (perftest checks each as it counts it) */
static inline int poll_batch(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	int ne = ibv_poll_cq(cq, POLL_BATCH, wc);
	if (ne < 0) {
		errno = EIO;
		die("ibv_poll_cq");
	}
	for (int i = 0; i < ne; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "perftest-twin: %s completion: %s\n", what, ibv_wc_status_str(wc[i].status));
			exit(1);
		}
	}
	return ne;
}

/* perftest's run_iter_bw, one QP, post_list 1, with the post-send flow perftest uses where rdma-core has it
 * (ibv_wr_start, ibv_wr_rdma_write or ibv_wr_send, ibv_wr_set_sge, ibv_wr_complete): up to TX_DEPTH requests
 * outstanding, one in cq_mod signaled (and the last), a time stamp per post and per completion (perftest's
 * tposted and tcompleted), completions polled POLL_BATCH at a time */
static void bw_client(struct ibv_qp_ex *qpx, struct ibv_cq *cq, uint64_t lbase, uint32_t lkey, uint64_t rbase,
		uint32_t rkey, unsigned long iters, uint64_t *posted, uint64_t *completed)
{
	struct ibv_wc wc[POLL_BATCH];
	unsigned long scnt = 0, ccnt = 0;
	int cq_mod = opt.size > CQ_MOD_LIMIT ? 1 : CQ_MOD, cycle = opt.size <= CYCLE / 2;
	uint64_t laddr = lbase, raddr = rbase;
	unsigned flags = IBV_SEND_SIGNALED;
	while (scnt < iters || ccnt < iters) {
		while (scnt < iters && scnt - ccnt + 1 <= TX_DEPTH) {
			if (scnt % cq_mod == 0 && cq_mod > 1 && scnt != iters - 1)
				flags &= ~IBV_SEND_SIGNALED;
			posted[scnt] = __builtin_ia32_rdtsc();
			ibv_wr_start(qpx);
			qpx->wr_id = 0;
			qpx->wr_flags = flags;
			if (opt.test == WRITE_BW)
				ibv_wr_rdma_write(qpx, rkey, raddr);
			else
				ibv_wr_send(qpx);
			ibv_wr_set_sge(qpx, lkey, laddr, opt.size);
			if (ibv_wr_complete(qpx))
				die("ibv_wr_complete");
			if (cycle) {
				laddr = next_addr(laddr, lbase, scnt);
				if (opt.test == WRITE_BW)
					raddr = next_addr(raddr, rbase, scnt);
			}
			scnt++;
			if (scnt % cq_mod == (unsigned long)cq_mod - 1 || scnt == iters - 1)
				flags |= IBV_SEND_SIGNALED;
		}
		if (ccnt < iters) {
			int ne = poll_batch(cq, wc, "send");
			for (int i = 0; i < ne; i++) {
				ccnt += cq_mod;
				completed[(ccnt > iters ? iters : ccnt) - 1] = __builtin_ia32_rdtsc();
			}
		}
	}
}

/* perftest's run_iter_bw_server for send_bw: completions polled POLL_BATCH at a time, a receive posted again for
 * each while later messages still need it (*posted of the run's total) */
static void bw_server(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_recv_wr *rwr, unsigned long iters,
		unsigned long *posted, unsigned long total)
{
	struct ibv_wc wc[POLL_BATCH];
	struct ibv_recv_wr *bad;
	unsigned long rcnt = 0;
	while (rcnt < iters) {
		int ne = poll_batch(cq, wc, "receive");
		for (int i = 0; i < ne; i++) {
			rcnt++;
			if (*posted < total) {
				if (ibv_post_recv(qp, rwr, &bad))
					die("ibv_post_recv");
				++*posted;
			}
		}
	}
}

int main(int argc, char **argv)
{
	int c;
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "send_lat") == 0)
		opt.test = SEND_LAT;
	else if (strcmp(argv[1], "write_lat") == 0)
		opt.test = WRITE_LAT;
	else if (strcmp(argv[1], "read_lat") == 0)
		opt.test = READ_LAT;
	else if (strcmp(argv[1], "atomic_lat") == 0)
		opt.test = ATOMIC_LAT;
	else if (strcmp(argv[1], "write_bw") == 0)
		opt.test = WRITE_BW;
	else if (strcmp(argv[1], "send_bw") == 0)
		opt.test = SEND_BW;
	else
		usage();
	argv++;
	argc--;
	while ((c = getopt(argc, argv, "es:n:w:p:d:i:x:")) != -1) {
		switch (c) {
		case 'e': opt.event = 1; break;
		case 's': opt.size = strtoul(optarg, NULL, 0); break;
		case 'n': opt.iters = strtoul(optarg, NULL, 0); break;
		case 'w': opt.warmup = strtoul(optarg, NULL, 0); break;
		case 'p': opt.port = strtoul(optarg, NULL, 0); break;
		case 'd': opt.device = optarg; break;
		case 'i': opt.ib_port = atoi(optarg); break;
		case 'x': opt.gid_index = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind < argc)
		opt.server = argv[optind++];
	if (opt.test == ATOMIC_LAT)
		opt.size = 8;
	if (optind != argc || opt.iters == 0 || opt.size == 0 || (opt.event && opt.test != SEND_LAT))
		usage();
	int client = opt.server != NULL, bw = opt.test == WRITE_BW || opt.test == SEND_BW;
	unsigned long total = opt.warmup + opt.iters;
	int rx_depth = total < RX_DEPTH ? (int)total : RX_DEPTH;

	struct ibv_device **list = ibv_get_device_list(NULL);
	if (!list || !list[0])
		die("no RDMA device");
	struct ibv_device *dev = list[0];
	for (int i = 0; opt.device && list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), opt.device) == 0)
			dev = list[i];
	struct ibv_context *ctx = ibv_open_device(dev);
	if (!ctx)
		die("ibv_open_device");
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	/* the first half is sent or written from (read into, for read_lat and atomic_lat), the second is received
	 * or written into (read, added to) by the peer */
	size_t half = (opt.size + 63) / 64 * 64;
	if (bw && half < CYCLE)
		half = CYCLE;
	char *buf = aligned_alloc(64, 2 * half);
	if (buf)
		memset(buf, 0, 2 * half);
	struct ibv_mr *mr = pd && buf ? ibv_reg_mr(pd, buf, 2 * half, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	if (!mr)
		die("ibv_reg_mr");
	struct ibv_comp_channel *send_channel = NULL, *recv_channel = NULL;
	if (opt.event) {
		send_channel = ibv_create_comp_channel(ctx);
		recv_channel = ibv_create_comp_channel(ctx);
		if (!send_channel || !recv_channel)
			die("ibv_create_comp_channel");
	}
	struct ibv_cq *send_cq = ibv_create_cq(ctx, bw ? TX_DEPTH : 1, NULL, send_channel, 0);
	struct ibv_cq *recv_cq = ibv_create_cq(ctx, rx_depth, NULL, recv_channel, 0);
	if (!send_cq || !recv_cq)
		die("ibv_create_cq");
	if (opt.event && (ibv_req_notify_cq(send_cq, 0) || ibv_req_notify_cq(recv_cq, 0)))
		die("ibv_req_notify_cq");
	struct ibv_qp_init_attr init = {
		.send_cq = send_cq, .recv_cq = recv_cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1, .max_recv_wr = rx_depth, .max_send_sge = 1, .max_recv_sge = 1,
			.max_inline_data = INLINE_SIZE},
	};
	/* bandwidth: an extended QP for the ibv_wr_* flow, as perftest creates it */
	struct ibv_qp_init_attr_ex init_ex = {
		.send_cq = send_cq, .recv_cq = recv_cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = TX_DEPTH, .max_recv_wr = rx_depth, .max_send_sge = 1, .max_recv_sge = 1},
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND,
	};
	struct ibv_qp *qp = bw ? ibv_create_qp_ex(ctx, &init_ex) : ibv_create_qp(pd, &init);
	if (!qp)
		die("ibv_create_qp");
	struct ibv_qp_ex *qpx = bw ? ibv_qp_to_qp_ex(qp) : NULL;
	if (bw && !qpx)
		die("ibv_qp_to_qp_ex");
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_INIT, .port_num = opt.ib_port,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC};
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("ibv_modify_qp INIT");

	struct ibv_sge recv_sge = {.addr = (uintptr_t)buf + half, .length = opt.size, .lkey = mr->lkey};
	struct ibv_recv_wr recv_wr = {.sg_list = &recv_sge, .num_sge = 1}, *bad_recv;
	for (int i = 0; (opt.test == SEND_LAT || opt.test == SEND_BW) && i < rx_depth; i++) {
		recv_wr.wr_id = i;
		if (ibv_post_recv(qp, &recv_wr, &bad_recv))
			die("ibv_post_recv");
	}

	struct ibv_port_attr port;
	struct endpoint me = {.qpn = qp->qp_num, .rkey = mr->rkey, .addr = (uintptr_t)buf + half}, peer;
	if (ibv_query_port(ctx, opt.ib_port, &port) || ibv_query_gid(ctx, opt.ib_port, opt.gid_index, &me.gid))
		die("ibv_query_port/gid");
	me.lid = port.lid;
	srand48(getpid() * time(NULL));
	me.psn = lrand48() & 0xffffff;
	int fd = tcp_connect();
	full(fd, &me, sizeof me, 1);
	full(fd, &peer, sizeof peer, 0);

	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = port.active_mtu, .dest_qp_num = peer.qpn, .rq_psn = peer.psn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = {.dlid = peer.lid, .port_num = opt.ib_port, .is_global = 1,
			.grh = {.dgid = peer.gid, .sgid_index = opt.gid_index, .hop_limit = 1}},
	};
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("ibv_modify_qp RTR");
	attr = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.sq_psn = me.psn, .max_rd_atomic = 1};
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("ibv_modify_qp RTS");
	char sync = 's';
	full(fd, &sync, 1, 1); /* both QPs are ready to receive before either sends */
	full(fd, &sync, 1, 0);

	struct ibv_sge send_sge = {.addr = (uintptr_t)buf, .length = opt.size, .lkey = mr->lkey};
	struct ibv_send_wr send_wr = {.sg_list = &send_sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (opt.size <= INLINE_SIZE ? IBV_SEND_INLINE : 0)}, *bad_send;
	if (opt.test == WRITE_LAT) {
		send_wr.opcode = IBV_WR_RDMA_WRITE;
		send_wr.wr.rdma.remote_addr = peer.addr;
		send_wr.wr.rdma.rkey = peer.rkey;
	} else if (opt.test == READ_LAT) {
		send_wr.opcode = IBV_WR_RDMA_READ;
		send_wr.send_flags = IBV_SEND_SIGNALED; /* perftest: no inline reads */
		send_wr.wr.rdma.remote_addr = peer.addr;
		send_wr.wr.rdma.rkey = peer.rkey;
	} else if (opt.test == ATOMIC_LAT) {
		send_wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		send_wr.send_flags = IBV_SEND_SIGNALED;
		send_wr.wr.atomic.remote_addr = peer.addr;
		send_wr.wr.atomic.rkey = peer.rkey;
		send_wr.wr.atomic.compare_add = 1;
	}
	struct ibv_wc wc;
	unsigned long scnt = 0, rcnt = 0;
	struct timespec t0, t1;
	if (bw) { /* the warm-up run, both sides ready, the measured run */
		uint64_t *posted = calloc(total, sizeof *posted), *completed = calloc(total, sizeof *completed);
		unsigned long receives = rx_depth;
		if (!posted || !completed)
			die("calloc");
		for (int run = 0; run < 2; run++) {
			unsigned long n = run == 0 ? opt.warmup : opt.iters;
			if (run == 1 && client) {
				clock_gettime(CLOCK_MONOTONIC, &t0);
				rdma4j_icount_start();
			}
			if (client && n)
				bw_client(qpx, send_cq, (uintptr_t)buf, mr->lkey, peer.addr, peer.rkey, n, posted, completed);
			else if (opt.test == SEND_BW && n)
				bw_server(qp, recv_cq, &recv_wr, n, &receives, total);
			if (run == 0) {
				full(fd, &sync, 1, 1);
				full(fd, &sync, 1, 0);
			}
		}
		free(posted);
		free(completed);
		scnt = rcnt = total; /* the latency loops below have nothing to do */
	}
	if (!bw && (opt.test == READ_LAT || opt.test == ATOMIC_LAT)) { /* run_iter_lat: the client alone */
		for (; client && scnt < total; scnt++) {
			if (scnt == opt.warmup) {
				clock_gettime(CLOCK_MONOTONIC, &t0);
				rdma4j_icount_start();
			}
			if (ibv_post_send(qp, &send_wr, &bad_send))
				die("ibv_post_send");
			take(send_cq, NULL, &wc, opt.test == READ_LAT ? "read" : "atomic");
		}
		rcnt = total; /* the server's loop is empty */
		scnt = total;
	}
	volatile char *poll_byte = buf + half + opt.size - 1, *post_byte = buf + opt.size - 1;
	while (opt.test == WRITE_LAT && (scnt < total || rcnt < total)) { /* run_iter_lat_write */
		if (rcnt < total && !(scnt < 1 && !client)) {
			rcnt++;
			/* the spin's empty looks are left out, as rdma4j's are (the marks of marks.c; poll.c's for CQs) */
			for (;;) {
				rdma4j_icount_poll();
				if (*poll_byte == (char)rcnt)
					break;
				rdma4j_icount_empty();
			}
		}
		if (scnt < total) {
			if (client && scnt == opt.warmup) {
				clock_gettime(CLOCK_MONOTONIC, &t0);
				rdma4j_icount_start();
			}
			*post_byte = (char)++scnt;
			if (ibv_post_send(qp, &send_wr, &bad_send))
				die("ibv_post_send");
			take(send_cq, NULL, &wc, "write");
		}
	}
	while (scnt < total || rcnt < total) { /* run_iter_lat_send */
		if (rcnt < total && !(scnt < 1 && client)) {
			take(recv_cq, recv_channel, &wc, "receive");
			rcnt++;
			if (rcnt + rx_depth <= total) {
				recv_wr.wr_id = wc.wr_id;
				if (ibv_post_recv(qp, &recv_wr, &bad_recv))
					die("ibv_post_recv");
			}
		}
		if (scnt < total) {
			if (client && scnt == opt.warmup) {
				clock_gettime(CLOCK_MONOTONIC, &t0);
				rdma4j_icount_start();
			}
			scnt++;
			if (ibv_post_send(qp, &send_wr, &bad_send))
				die("ibv_post_send");
			take(send_cq, send_channel, &wc, "send");
		}
	}
	if (client) {
		rdma4j_icount_stop();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double usec = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3;
		static const char *const names[] = {"send_lat", "write_lat", "read_lat", "atomic_lat", "write_bw", "send_bw"};
		printf("# perftest-twin %s%s %u bytes: %lu iterations after %lu of warm-up, %.2f usec an iteration\n",
				names[opt.test], opt.event ? " -e" : "", opt.size, opt.iters, opt.warmup, usec / opt.iters);
	}
	full(fd, &sync, 1, 1); /* neither side destroys its QP while the other may still need it */
	full(fd, &sync, 1, 0);
	close(fd);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(send_cq);
	ibv_destroy_cq(recv_cq);
	if (opt.event) {
		ibv_destroy_comp_channel(send_channel);
		ibv_destroy_comp_channel(recv_channel);
	}
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
