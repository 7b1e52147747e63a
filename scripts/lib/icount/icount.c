/*
 * icount.c: a QEMU TCG plugin (plugin API version 1, QEMU 7.2) that counts the guest instructions executed,
 * split into user space and kernel by the address of the code, and reports them between marks the measured
 * programs execute. Compiled by scripts/lib/icount/build with gcc; loaded with
 *     qemu-system-x86_64 ... -plugin icount.so,out=FILE
 *
 * A mark is one instruction no compiler emits: a 7-byte NOP whose displacement is a magic number,
 * `nopl 0x52344a01(%rax)` (start) or `nopl 0x52344a02(%rax)` (stop), bytes 0f 1f 80 then the little-endian
 * displacement (marks.c executes them). At each start the plugin notes every vCPU's counts; at each stop it
 * appends one line to FILE:
 *     window SEQ total T user U kernel K spin S polls P empty E
 * the instructions of all vCPUs (every process and the kernel: the other side of a ping-pong and rxe's work
 * too) executed between the two marks, T = U + K. At exit: the same for the whole run, `exit total ...`.
 *
 * Busy polling's empty polls are left out of U and counted in S instead: two more marks, 0x52344a03 (poll)
 * and 0x52344a04 (empty), which poll.c executes around every poll_cq of a program it is preloaded into (before
 * the poll; after a poll that found nothing). On a vCPU, the user-space instructions from the start of an
 * empty poll to the start of the next poll are spin: the busy loop's round, however long the peer takes. A
 * kernel entry on that vCPU in between (an interrupt, a system call, a switch to another task) ends the spin
 * there, so nothing but the loop is left out. P and E count the polls and the empty ones.
 *
 * A window's line ends with the same figures for its polled span, from the start of the first poll in the
 * window to the start of the last: ` polled total T user U kernel K spin S polls P empty E` (zeros without a
 * poll). A program that cannot be marked (perftest) is marked from outside, start-up included, and its
 * polled span is its measuring loop; the start-up's own time-dependent spins (perftest samples the CPU's
 * clock rate) stay outside it.
 *
 * The timer's interrupt is left out of K too and counted apart, T' and N at the end of each part ` tick T' ticks
 * N`, when the plugin is given its bounds, tick=ENTRY:EXIT (hexadecimal addresses of the guest kernel's
 * __sysvec_apic_timer_interrupt and irq_exit_rcu; scripts/perf-compare reads them from the kernel's System.map,
 * the PVH-booted kernel is not relocated): on a vCPU, the kernel instructions from the start of a block at ENTRY
 * to the start of a block at EXIT are the tick's (the hard interrupt: hrtimers, the scheduler's and RCU's
 * accounting, with interrupts off; the softirqs that follow count as kernel). A vCPU that spins takes a tick
 * every 4 ms of wall-clock time, which the host's load stretches: that is time, not the code's work.
 *
 * With the argument profile=SHIFT the plugin also says where a window's instructions went: it counts them by
 * block of 2^SHIFT bytes of code address (spin left out, as above) and after each window line writes every
 * block that ran, busiest first, `  block ADDRESS user|kernel COUNT`, for scripts/lib/icount/where to name from
 * /proc/PID/maps (user space) and /proc/kallsyms (the kernel). Slower; for analysis, not for the figures.
 *
 * Counting: every translated block gets an execution callback with its instruction count, added to the
 * counter of the vCPU that runs it (per vCPU, so multi-threaded TCG loses no count to a race). A block
 * that an exception or interrupt leaves early is counted whole: an overcount of at most a block per such
 * event, the same for any program.
 *
 * The declarations below are this project's own, written from QEMU's documented plugin API (docs/devel/
 * tcg-plugins.rst); Debian packages no qemu-plugin.h.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int profile_shift = -1; /* profile=SHIFT, or -1 */

/* ---- the plugin API, version 1 (the subset used) ---- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum plugin_cb_flags { PLUGIN_CB_NO_REGS = 0 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb)(unsigned int vcpu_index, void *userdata);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *userdata);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb cb,
		enum plugin_cb_flags flags, void *userdata);
extern void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, vcpu_udata_cb cb,
		enum plugin_cb_flags flags, void *userdata);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *userdata);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
extern const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
extern size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
extern void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* ---- counting ---- */
#define MAX_VCPUS 16
#define KERNEL_BIT (1ULL << 63)
/* x86-64: the kernel's half of the address space starts at the top of the canonical hole */
#define KERNEL_START 0xffff800000000000ULL

static const unsigned char MARK_START[7] = { 0x0f, 0x1f, 0x80, 0x01, 0x4a, 0x34, 0x52 };
static const unsigned char MARK_STOP[7] = { 0x0f, 0x1f, 0x80, 0x02, 0x4a, 0x34, 0x52 };

static const unsigned char MARK_POLL[7] = { 0x0f, 0x1f, 0x80, 0x03, 0x4a, 0x34, 0x52 };
static const unsigned char MARK_EMPTY[7] = { 0x0f, 0x1f, 0x80, 0x04, 0x4a, 0x34, 0x52 };

/* Written only by the thread of the vCPU (multi-threaded TCG: one a vCPU), read by any at a mark: the writes
 * are ordered (volatile, and x86's stores are seen in order) so that a reader never counts a spin twice or
 * with another spin's start (see end_spin, mark_empty, sum). */
struct counts {
	volatile uint64_t user, kernel, spin, polls, empty, tick, ticks;
	int in_tick; /* between the tick's entry and exit */
	uint64_t poll_from; /* user count at the start of the current poll */
	volatile uint64_t spin_from; /* user count at the start of the empty poll the vCPU spins after, if spinning */
	volatile int spinning;
};

struct totals {
	uint64_t user, kernel, spin, polls, empty, tick, ticks;
};
static uint64_t tick_entry, tick_exit; /* tick=ENTRY:EXIT, or 0 */
static struct counts counts[MAX_VCPUS] __attribute__((aligned(64)));
static struct totals at_start; /* at the last start mark */
static struct totals first_poll, last_poll; /* in the open window, at the start of its first and last poll */
static int polled; /* the open window has seen a poll */
/* the window's state above, which every vCPU's marks change (multi-threaded TCG: from several threads) */
static pthread_mutex_t window_lock = PTHREAD_MUTEX_INITIALIZER;
static int open_window;
static uint64_t windows;
static FILE *out;

static struct totals sum(void)
{
	struct totals t = { 0, 0, 0, 0, 0, 0, 0 };
	for (int i = 0; i < MAX_VCPUS; i++) {
		/* spin before spinning: a spin that ends meanwhile is then missed (at most one), never counted twice */
		t.spin += counts[i].spin;
		if (counts[i].spinning) { /* the spin under way so far; spin_from was written before spinning */
			/* spin_from before user (volatile reads, in this order): the vCPU may meanwhile end this spin and
			 * start the next, whose spin_from is then newer than a user count read first (a difference below
			 * zero, which wrapped to 2^64 and gave a window a user count of 9.2e18) */
			uint64_t from = counts[i].spin_from;
			uint64_t now = counts[i].user;
			if (now > from)
				t.spin += now - from;
		}
		t.user += counts[i].user;
		t.kernel += counts[i].kernel;
		t.polls += counts[i].polls;
		t.empty += counts[i].empty;
		t.tick += counts[i].tick;
		t.ticks += counts[i].ticks;
	}
	return t;
}

static void end_spin(struct counts *c)
{
	if (c->spinning) {
		uint64_t d = c->user - c->spin_from;
		c->spinning = 0; /* before the spin is added: see sum */
		c->spin += d;
	}
}

/* ---- the profile: instructions by block of code, spin left out ---- */
#define BLOCKS (1 << 22) /* a power of two (64 MiB of tables at 16-byte blocks); one more slot, the last, for blocks that found no room */
#define PENDING 8192
struct tb_info { /* a translated block's, for its execution callback */
	uint64_t v; /* instructions | KERNEL_BIT */
	uint32_t block;
};
static uint64_t block_key[BLOCKS + 1]; /* (address >> shift) + 1, 0 = free */
static uint64_t block_count[BLOCKS + 1];
static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;
/* a vCPU's user-space counts since its last poll or kernel entry: spin or not, as the next of those says */
struct pending {
	uint32_t block[PENDING];
	uint32_t n[PENDING];
	uint32_t size;
};
static struct pending pending[MAX_VCPUS];

static uint32_t block_of(uint64_t address)
{
	uint64_t key = (address >> profile_shift) + 1;
	uint32_t i = (uint32_t)(key * 0x9E3779B97F4A7C15ULL >> 40) & (BLOCKS - 1);
	uint32_t probes = 0;
	pthread_mutex_lock(&block_lock);
	while (block_key[i] != 0 && block_key[i] != key) {
		i = (i + 1) & (BLOCKS - 1);
		if (++probes == 4096) { /* the table is nearly full: count this block among the unplaced */
			i = BLOCKS;
			break;
		}
	}
	if (i < BLOCKS)
		block_key[i] = key;
	pthread_mutex_unlock(&block_lock);
	return i;
}

static void settle(unsigned int vcpu, int spin)
{
	struct pending *p = &pending[vcpu % MAX_VCPUS];
	if (!spin)
		for (uint32_t i = 0; i < p->size; i++)
			__atomic_fetch_add(&block_count[p->block[i]], p->n[i], __ATOMIC_RELAXED);
	p->size = 0;
}

static void tb_exec(unsigned int vcpu, void *udata);

static void tb_exec_profiled(unsigned int vcpu, void *udata)
{
	const struct tb_info *t = udata;
	struct counts *c = &counts[vcpu % MAX_VCPUS];
	if (open_window) {
		if (t->v & KERNEL_BIT) {
			settle(vcpu, c->spinning);
			__atomic_fetch_add(&block_count[t->block], t->v & ~KERNEL_BIT, __ATOMIC_RELAXED);
		} else {
			struct pending *p = &pending[vcpu % MAX_VCPUS];
			if (p->size == PENDING)
				settle(vcpu, 0);
			p->block[p->size] = t->block;
			p->n[p->size++] = (uint32_t)t->v;
		}
	}
	tb_exec(vcpu, (void *)(uintptr_t)t->v);
}

static int by_count(const void *a, const void *b)
{
	uint64_t x = block_count[*(const uint32_t *)a], y = block_count[*(const uint32_t *)b];
	return x < y ? 1 : x > y ? -1 : 0;
}

static void write_profile(void)
{
	static uint32_t order[BLOCKS + 1];
	uint32_t n = 0;
	char line[128];
	for (uint32_t i = 0; i < BLOCKS + 1; i++)
		if (block_count[i])
			order[n++] = i;
	qsort(order, n, sizeof order[0], by_count);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t address = order[i] == BLOCKS ? 0 : (block_key[order[i]] - 1) << profile_shift;
		snprintf(line, sizeof line, "  block 0x%llx %s %llu\n", (unsigned long long)address,
			order[i] == BLOCKS ? "unplaced" : address >= KERNEL_START ? "kernel" : "user",
			(unsigned long long)block_count[order[i]]);
		if (out)
			fputs(line, out);
	}
	if (out)
		fflush(out);
}

static void tb_exec(unsigned int vcpu, void *udata)
{
	uint64_t v = (uint64_t)(uintptr_t)udata;
	struct counts *c = &counts[vcpu % MAX_VCPUS];
	if (v & KERNEL_BIT) {
		end_spin(c);
		if (c->in_tick)
			c->tick += v & ~KERNEL_BIT;
		else
			c->kernel += v & ~KERNEL_BIT;
	} else {
		c->user += v;
	}
}

static void tick_enter(unsigned int vcpu, void *udata)
{
	struct counts *c = &counts[vcpu % MAX_VCPUS];
	(void)udata;
	c->in_tick = 1;
	c->ticks++;
}

static void tick_leave(unsigned int vcpu, void *udata)
{
	(void)udata;
	counts[vcpu % MAX_VCPUS].in_tick = 0;
}

static void mark_poll(unsigned int vcpu, void *udata)
{
	struct counts *c = &counts[vcpu % MAX_VCPUS];
	int spun = c->spinning;
	(void)udata;
	end_spin(c);
	if (profile_shift >= 0)
		settle(vcpu, spun); /* what ran since the last poll began: the busy loop's round, or work */
	c->polls++;
	c->poll_from = c->user;
	pthread_mutex_lock(&window_lock);
	if (open_window) {
		last_poll = sum();
		if (!polled) {
			first_poll = last_poll;
			polled = 1;
		}
	}
	pthread_mutex_unlock(&window_lock);
}

static void mark_empty(unsigned int vcpu, void *udata)
{
	struct counts *c = &counts[vcpu % MAX_VCPUS];
	(void)udata;
	c->empty++;
	c->spin_from = c->poll_from; /* before spinning: see sum */
	c->spinning = 1;
}

static struct totals minus(struct totals a, struct totals b)
{
	struct totals d = { a.user - b.user, a.kernel - b.kernel, a.spin - b.spin, a.polls - b.polls,
		a.empty - b.empty, a.tick - b.tick, a.ticks - b.ticks };
	return d;
}

/* " total T user U kernel K spin S polls P empty E tick T' ticks N": user is U, the spin left out; kernel is K,
 * the tick left out */
static void format(char *buf, size_t size, struct totals t)
{
	uint64_t user = t.spin < t.user ? t.user - t.spin : 0; /* never below zero, whatever a race left */
	snprintf(buf, size, " total %llu user %llu kernel %llu spin %llu polls %llu empty %llu tick %llu ticks %llu",
		(unsigned long long)(user + t.kernel), (unsigned long long)user, (unsigned long long)t.kernel,
		(unsigned long long)t.spin, (unsigned long long)t.polls, (unsigned long long)t.empty,
		(unsigned long long)t.tick, (unsigned long long)t.ticks);
}

static void write_line(const char *what, struct totals t, const struct totals *span)
{
	char line[800], a[300], b[320] = "", c[300];
	format(a, sizeof a, t);
	if (span) {
		format(c, sizeof c, *span);
		snprintf(b, sizeof b, " polled%s", c);
	}
	snprintf(line, sizeof line, "%s%s%s\n", what, a, b);
	if (out) {
		fputs(line, out);
		fflush(out);
	} else {
		qemu_plugin_outs(line);
	}
}

/* Marks come from one measured program at a time; two at once would interleave their windows. */
static void mark_start(unsigned int vcpu, void *udata)
{
	(void)udata;
	end_spin(&counts[vcpu % MAX_VCPUS]);
	pthread_mutex_lock(&window_lock);
	if (profile_shift >= 0) {
		memset(block_count, 0, sizeof block_count);
		for (int i = 0; i < MAX_VCPUS; i++)
			pending[i].size = 0;
	}
	at_start = sum();
	polled = 0;
	open_window = 1;
	pthread_mutex_unlock(&window_lock);
}

static void mark_stop(unsigned int vcpu, void *udata)
{
	struct totals t, span = { 0, 0, 0, 0, 0, 0, 0 };
	char what[40];
	(void)udata;
	end_spin(&counts[vcpu % MAX_VCPUS]);
	pthread_mutex_lock(&window_lock);
	t = sum();
	if (!open_window) {
		write_line("unopened", t, NULL);
	} else {
		open_window = 0;
		if (polled)
			span = minus(last_poll, first_poll);
		snprintf(what, sizeof what, "window %llu", (unsigned long long)++windows);
		write_line(what, minus(t, at_start), &span);
		if (profile_shift >= 0) {
			settle(vcpu, 0);
			write_profile();
		}
	}
	pthread_mutex_unlock(&window_lock);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint64_t v = n | (qemu_plugin_tb_vaddr(tb) >= KERNEL_START ? KERNEL_BIT : 0);
	(void)id;
	/* before the block's count: the entry's block is the tick's, the exit's is not */
	if (tick_entry && qemu_plugin_tb_vaddr(tb) == tick_entry)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tick_enter, PLUGIN_CB_NO_REGS, NULL);
	else if (tick_exit && qemu_plugin_tb_vaddr(tb) == tick_exit)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tick_leave, PLUGIN_CB_NO_REGS, NULL);
	if (profile_shift >= 0) {
		/* one a translation, never freed: blocks are retranslated rarely, and this mode is for analysis */
		struct tb_info *t = malloc(sizeof *t);
		if (t) {
			t->v = v;
			t->block = block_of(qemu_plugin_tb_vaddr(tb));
			qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec_profiled, PLUGIN_CB_NO_REGS, t);
		} else {
			qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, PLUGIN_CB_NO_REGS, (void *)(uintptr_t)v);
		}
	} else {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, PLUGIN_CB_NO_REGS, (void *)(uintptr_t)v);
	}
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		if (qemu_plugin_insn_size(insn) != sizeof MARK_START)
			continue;
		const void *bytes = qemu_plugin_insn_data(insn);
		if (memcmp(bytes, MARK_START, sizeof MARK_START) == 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_start, PLUGIN_CB_NO_REGS, NULL);
		else if (memcmp(bytes, MARK_STOP, sizeof MARK_STOP) == 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_stop, PLUGIN_CB_NO_REGS, NULL);
		else if (memcmp(bytes, MARK_POLL, sizeof MARK_POLL) == 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_poll, PLUGIN_CB_NO_REGS, NULL);
		else if (memcmp(bytes, MARK_EMPTY, sizeof MARK_EMPTY) == 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_empty, PLUGIN_CB_NO_REGS, NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	write_line("exit", sum(), NULL);
	if (out)
		fclose(out);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const void *info,
		int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0) {
			out = fopen(argv[i] + 4, "a");
			if (!out) {
				perror(argv[i] + 4);
				return -1;
			}
		} else if (strncmp(argv[i], "profile=", 8) == 0) {
			profile_shift = atoi(argv[i] + 8);
			if (profile_shift < 4 || profile_shift > 30) {
				fprintf(stderr, "icount: profile=SHIFT takes 4..30\n");
				return -1;
			}
		} else if (strncmp(argv[i], "tick=", 5) == 0) {
			char *end;
			tick_entry = strtoull(argv[i] + 5, &end, 16);
			if (*end == ':')
				tick_exit = strtoull(end + 1, &end, 16);
			if (*end || tick_entry < KERNEL_START || tick_exit < KERNEL_START) {
				fprintf(stderr, "icount: tick=ENTRY:EXIT takes two kernel addresses in hexadecimal\n");
				return -1;
			}
		} else {
			fprintf(stderr, "icount: unknown argument %s (takes out=FILE, profile=SHIFT, tick=ENTRY:EXIT)\n", argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
