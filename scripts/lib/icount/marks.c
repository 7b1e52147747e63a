/*
 * marks.c: the marks scripts/lib/icount/icount.c counts between. Built twice by scripts/lib/icount/build:
 * as libicount-marks.so (rdma4j_icount_start / rdma4j_icount_stop, which `rdma4j perf --icount-marks LIB`
 * calls around its measured loops, and rdma4j_icount_poll / rdma4j_icount_empty around a spin on memory) and as the command `icount-mark start|stop|run COMMAND [ARGS...]` (a shell
 * marks around a C tool it cannot change; `run` marks around one command and exits with its status).
 * Outside a counting guest a mark is a NOP and costs nothing. Each function must stay exactly the mark and
 * `ret`: rdma4j's InstructionMarks checks the code before calling it.
 */
#include <stdio.h>
#include <string.h>
#ifdef ICOUNT_MARK_MAIN
#include <sys/wait.h>
#include <unistd.h>
#endif

void rdma4j_icount_start(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x01, 0x4a, 0x34, 0x52" ::: "memory");
}

void rdma4j_icount_stop(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x02, 0x4a, 0x34, 0x52" ::: "memory");
}

/* around a program's own busy wait that is no CQ poll (write_lat's spin on memory): poll before each look, empty
 * after one that found nothing; the plugin leaves out the rounds from an empty look to the next look, as it does
 * busy polling's empty polls of a CQ (poll.c) */
void rdma4j_icount_poll(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x03, 0x4a, 0x34, 0x52" ::: "memory");
}

void rdma4j_icount_empty(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x04, 0x4a, 0x34, 0x52" ::: "memory");
}

#ifdef ICOUNT_MARK_MAIN
int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "start") == 0)
		rdma4j_icount_start();
	else if (argc == 2 && strcmp(argv[1], "stop") == 0)
		rdma4j_icount_stop();
	else if (argc >= 3 && strcmp(argv[1], "run") == 0) {
		int status;
		pid_t pid;
		fflush(NULL);
		rdma4j_icount_start();
		pid = fork();
		if (pid == 0) {
			execvp(argv[2], argv + 2);
			perror(argv[2]);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0) {
			perror("icount-mark");
			return 125;
		}
		rdma4j_icount_stop();
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	} else {
		fprintf(stderr, "usage: icount-mark start|stop|run COMMAND [ARGS...]\n");
		return 2;
	}
	return 0;
}
#endif
