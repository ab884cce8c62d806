/*
 * pause: the init of a CRI pod sandbox for tests/cri (no registry, so the
 * pause image is built locally from this). It holds the pod's namespaces
 * open for the pod's containers: it waits for signals, reaps any child
 * that is re-parented to it (it is pid 1 of the pod when the pod shares
 * its pid namespace) and exits 0 on SIGINT or SIGTERM. Linked statically:
 * the image has nothing but this file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void on_child(int sig)
{
	int saved = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

static int handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "pause: takes no arguments\n");
		return 2;
	}
	/* pid 1 ignores signals it has no handler for: install them all */
	if (handle(SIGINT, on_stop) < 0 || handle(SIGTERM, on_stop) < 0 ||
	    handle(SIGCHLD, on_child) < 0) {
		perror("pause: sigaction");
		return 1;
	}
	for (;;)
		pause();
}
