/* Terminals: the pty of a process with process.terminal=true.
 *
 * The pty pair is made inside the container from the container's own devpts
 * (after pivot_root, /dev/ptmx), its master is handed to the caller over the
 * console socket with SCM_RIGHTS (runc's protocol, so conmon, the containerd
 * shim and recvtty work unchanged), and the slave becomes the process's
 * controlling terminal and stdio. Without a console socket a foreground
 * `run`/`exec` receives the master itself over a socketpair and proxies it
 * to its own stdio with brig_terminal_proxy.
 *
 * Where each step runs:
 *   parent, before clone:  brig_terminal_check_mode, then either
 *                          brig_terminal_connect_socket (--console-socket) or
 *                          socketpair(AF_UNIX, SOCK_STREAM) (foreground);
 *                          the socket fd goes down to the init/exec child.
 *   container init:        after rootfs_pivot and before rootfs_finalize,
 *                          brig_terminal_setup (bind_console=true,
 *                          proxied unless --console-socket).
 *   exec child:            after joining the namespaces and chdir into the
 *                          container, brig_terminal_setup (bind_console=false,
 *                          proxied unless --console-socket).
 *   parent, foreground:    brig_terminal_recv_master on its end of the
 *                          socketpair, then brig_terminal_proxy until exit. */
#ifndef BRIG_TERMINAL_H
#define BRIG_TERMINAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"

/* Check the terminal/detach/console-socket combination as runc does: a tty
 * with a detached process needs a console socket, a console socket is only
 * meaningful with a tty, and a tty in the foreground needs a terminal on
 * brig's side (a stdio fd or the controlling terminal). */
int brig_terminal_check_mode (bool terminal, bool detach, const char *console_socket,
                              brig_error *err);

/* Connect to the AF_UNIX stream socket at path; *fd is O_CLOEXEC. */
int brig_terminal_connect_socket (const char *path, int *fd, brig_error *err);

/* Open a new pty pair from ptmx (NULL: "/dev/ptmx", relative to the current
 * root), unlocked, both ends O_CLOEXEC|O_NOCTTY; size may be NULL. */
int brig_terminal_open_pty (const char *ptmx, const oci_console_size *size, int *master,
                            int *slave, brig_error *err);

/* Set the window size of a pty (either end). */
int brig_terminal_set_size (int fd, unsigned short rows, unsigned short cols,
                            brig_error *err);

/* Send master over the connected socket sockfd with SCM_RIGHTS; the data
 * part carries the pty's name, as runc sends it. */
int brig_terminal_send_master (int sockfd, int master, brig_error *err);

/* Receive a pty master sent by brig_terminal_send_master; *master is
 * O_CLOEXEC. */
int brig_terminal_recv_master (int sockfd, int *master, brig_error *err);

/* Bind the slave (its /dev/pts/N path in the current root) onto
 * /dev/console, creating the mount point when missing. */
int brig_terminal_bind_console (int slave, brig_error *err);

/* Start a new session, make slave its controlling terminal and dup it onto
 * stdin, stdout and stderr (slave itself stays open; close it after). */
int brig_terminal_make_controlling (int slave, brig_error *err);

/* The whole in-container part: open the pty from /dev/ptmx, set size, clear
 * ONLCR when proxied (a foreground run/exec: brig copies the output), bind
 * the slave on /dev/console when bind_console, send the master over
 * sockfd, close the master and make the slave the controlling terminal and
 * stdio. sockfd is closed on return (success or not). */
int brig_terminal_setup (int sockfd, const oci_console_size *size, bool bind_console,
                         bool proxied, brig_error *err);

/* The window size of brig's stdin when it is a terminal (false if not, or
 * 0x0): a foreground pty starts with it, so the process never sees a
 * size the proxy corrects later. */
bool brig_terminal_stdin_size (oci_console_size *size);

/* Foreground supervision of child pid (a direct child of the caller) until
 * it exits: forward every catchable signal brig receives to it, and when
 * master >= 0 copy stdin to master and master to stdout (stdin in raw mode
 * when it is a tty, its window size copied to the pty now and on SIGWINCH).
 * *exit_status is the child's exit code, or 128+signal. master may be -1
 * (no terminal: only signals are forwarded). The caller's signal mask is
 * restored before returning. */
int brig_terminal_proxy (int master, pid_t pid, int *exit_status, brig_error *err);

/* One more fd for the proxy loop to watch (the sd_notify relay of a
 * foreground run): on_readable runs when fd is readable and returns false
 * once the fd is of no more interest. */
struct brig_proxy_watch {
  int fd;
  bool (*on_readable) (void *arg);
  void *arg;
};

/* brig_terminal_proxy that also serves watch (may be NULL). */
int brig_terminal_proxy_watch (int master, pid_t pid, const struct brig_proxy_watch *watch,
                               int *exit_status, brig_error *err);

#endif
