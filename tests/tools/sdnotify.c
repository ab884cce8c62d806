/* sdnotify MESSAGE...: send each MESSAGE as one datagram to $NOTIFY_SOCKET
 * (a path or @abstract), as sd_notify(3) does; exit 1 with a message when
 * it cannot. Runs inside the busybox rootfs of dropin_notify.bats: static,
 * no libsystemd. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  const char *path = getenv ("NOTIFY_SOCKET");
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  socklen_t len;
  int fd;

  if (path == NULL || *path == '\0' || strlen (path) >= sizeof sa.sun_path)
    {
      fprintf (stderr, "sdnotify: NOTIFY_SOCKET is unset or too long\n");
      return 1;
    }
  memcpy (sa.sun_path, path, strlen (path));
  len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + strlen (path));
  if (path[0] == '@')
    sa.sun_path[0] = '\0';
  fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    {
      perror ("sdnotify: socket");
      return 1;
    }
  for (int i = 1; i < argc; i++)
    if (sendto (fd, argv[i], strlen (argv[i]), 0, (struct sockaddr *) &sa, len) < 0)
      {
        fprintf (stderr, "sdnotify: send to %s: %s\n", path, strerror (errno));
        return 1;
      }
  return 0;
}
