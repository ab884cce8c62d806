/* bpf_count: the BPF objects of brig, for bench/soak.sh.
 *
 *   bpf_count [CGROUP_DIR...]
 *
 * Prints "progs N maps M memlock BYTES": the programs attached to the
 * given cgroup v2 directories (every attach type brig uses) and the maps
 * those programs use, counted once each, with the maps' memlock summed
 * (/proc/self/fdinfo); then "host_progs N host_maps M": every program and
 * map on the host whose name starts with "brig_" (other users of brig on
 * the machine included). Needs root. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long
bpf (int cmd, union bpf_attr *a)
{
  return syscall (SYS_bpf, cmd, a, sizeof *a);
}

static unsigned long long
memlock_of (int fd)
{
  char path[64], line[256];
  unsigned long long v = 0;
  FILE *f;

  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", fd);
  f = fopen (path, "r");
  if (f == NULL)
    return 0;
  while (fgets (line, sizeof line, f))
    if (sscanf (line, "memlock: %llu", &v) == 1)
      break;
  fclose (f);
  return v;
}

#define MAX_IDS 65536
static uint32_t seen_maps[MAX_IDS];
static size_t nseen;

static int
seen (uint32_t id)
{
  for (size_t i = 0; i < nseen; i++)
    if (seen_maps[i] == id)
      return 1;
  if (nseen < MAX_IDS)
    seen_maps[nseen++] = id;
  return 0;
}

/* The maps of program id: counted into *maps and *memlock once each. */
static void
prog_maps (uint32_t id, size_t *maps, unsigned long long *memlock)
{
  union bpf_attr a;
  struct bpf_prog_info info;
  uint32_t ids[64];
  int fd;

  memset (&a, 0, sizeof a);
  a.prog_id = id;
  fd = (int) bpf (BPF_PROG_GET_FD_BY_ID, &a);
  if (fd < 0)
    return;
  memset (&info, 0, sizeof info);
  info.nr_map_ids = 64;
  info.map_ids = (uint64_t) (uintptr_t) ids;
  memset (&a, 0, sizeof a);
  a.info.bpf_fd = (uint32_t) fd;
  a.info.info_len = sizeof info;
  a.info.info = (uint64_t) (uintptr_t) &info;
  if (bpf (BPF_OBJ_GET_INFO_BY_FD, &a) == 0)
    for (uint32_t i = 0; i < info.nr_map_ids && i < 64; i++)
      {
        int mfd;
        if (seen (ids[i]))
          continue;
        memset (&a, 0, sizeof a);
        a.map_id = ids[i];
        mfd = (int) bpf (BPF_MAP_GET_FD_BY_ID, &a);
        if (mfd < 0)
          continue;
        ++*maps;
        *memlock += memlock_of (mfd);
        close (mfd);
      }
  close (fd);
}

static const uint32_t types[] = {
  BPF_CGROUP_INET4_CONNECT, BPF_CGROUP_INET6_CONNECT, BPF_CGROUP_UDP4_SENDMSG,
  BPF_CGROUP_UDP6_SENDMSG, BPF_CGROUP_INET_EGRESS, BPF_CGROUP_DEVICE,
};

/* name of object fd (a program or a map) starts with "brig_" */
static int
named_brig (int fd, int prog)
{
  union bpf_attr a;
  struct bpf_prog_info pi;
  struct bpf_map_info mi;
  const char *name;

  memset (&a, 0, sizeof a);
  memset (&pi, 0, sizeof pi);
  memset (&mi, 0, sizeof mi);
  a.info.bpf_fd = (uint32_t) fd;
  a.info.info_len = prog ? sizeof pi : sizeof mi;
  a.info.info = prog ? (uint64_t) (uintptr_t) &pi : (uint64_t) (uintptr_t) &mi;
  if (bpf (BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
    return 0;
  name = prog ? pi.name : mi.name;
  return strncmp (name, "brig_", 5) == 0;
}

static size_t
host_count (int prog)
{
  union bpf_attr a;
  uint32_t id = 0;
  size_t n = 0;

  for (;;)
    {
      int fd;
      memset (&a, 0, sizeof a);
      a.start_id = id;
      if (bpf (prog ? BPF_PROG_GET_NEXT_ID : BPF_MAP_GET_NEXT_ID, &a) < 0)
        break;
      id = a.next_id;
      memset (&a, 0, sizeof a);
      if (prog)
        a.prog_id = id;
      else
        a.map_id = id;
      fd = (int) bpf (prog ? BPF_PROG_GET_FD_BY_ID : BPF_MAP_GET_FD_BY_ID, &a);
      if (fd < 0)
        continue;
      n += named_brig (fd, prog);
      close (fd);
    }
  return n;
}

int
main (int argc, char **argv)
{
  size_t progs = 0, maps = 0;
  unsigned long long memlock = 0;

  for (int i = 1; i < argc; i++)
    {
      int cg = open (argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (cg < 0)
        continue;
      for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        {
          uint32_t ids[64];
          union bpf_attr a;
          memset (&a, 0, sizeof a);
          a.query.target_fd = (uint32_t) cg;
          a.query.attach_type = types[t];
          a.query.prog_ids = (uint64_t) (uintptr_t) ids;
          a.query.prog_cnt = 64;
          if (bpf (BPF_PROG_QUERY, &a) < 0)
            continue;
          for (uint32_t k = 0; k < a.query.prog_cnt && k < 64; k++)
            {
              progs++;
              prog_maps (ids[k], &maps, &memlock);
            }
        }
      close (cg);
    }
  printf ("progs %zu maps %zu memlock %llu\n", progs, maps, memlock);
  printf ("host_progs %zu host_maps %zu\n", host_count (1), host_count (0));
  return 0;
}
