/* The runtime binary out of the container's reach. See selfexe.h.
 *
 * Whatever file is brig's exe_file when a brig process execve()s in the
 * container is what /proc/self/exe names there, and the container can
 * reopen it through /proc/PID/exe. Being non-dumpable does not help: the
 * program the container runs is dumpable again after its execve. So the
 * commands that place a process in a container re-execute brig first from
 * a file nobody can write:
 *
 * 1. A detached read-only bind mount of the binary (open_tree
 *    OPEN_TREE_CLONE, mount_setattr RDONLY|NOSUID|NODEV, execveat of the
 *    mount fd). The mount fd is close-on-exec: when the execve closes it,
 *    the kernel dissolves the mount (it is in no mount namespace from then
 *    on, only the new exe_file pins it), so no mountinfo lists it and
 *    mount_setattr or open_tree on it fail (EINVAL) for everyone. A write
 *    through /proc/PID/exe needs that mount writable: EROFS. No copy: the
 *    page cache of the binary is shared, nothing is charged per command.
 *    Needs CAP_SYS_ADMIN over brig's own mount namespace and Linux 5.12.
 * 2. Otherwise (rootless, old kernels, a binary in another mount namespace)
 *    a memfd copy sealed with F_SEAL_WRITE|F_SEAL_SHRINK|F_SEAL_GROW|
 *    F_SEAL_SEAL, which nobody can change, whatever their privileges, and
 *    which has no path back to the host's file. */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "log.h"
#include "paths.h"
#include "process/selfexe.h"
#include "utils.h"

#ifndef MFD_EXEC
# define MFD_EXEC 0x0010U
#endif
#ifndef F_SEAL_EXEC
# define F_SEAL_EXEC 0x0020
#endif

#ifndef F_SEAL_FUTURE_WRITE
# define F_SEAL_FUTURE_WRITE 0x0010
#endif

/* The seals without which the copy could still change: its size, and its
 * content (F_SEAL_WRITE, or F_SEAL_FUTURE_WRITE, which refuses every write
 * and writable mapping from now on and is all that an fd reopened through
 * /proc/PID/exe could try). */
#define SELFEXE_SEALS_SIZE (F_SEAL_SHRINK | F_SEAL_GROW)

extern char **environ;

static bool
fd_is_sealed (int fd)
{
  int seals = fcntl (fd, F_GET_SEALS);
  return seals >= 0 && (seals & SELFEXE_SEALS_SIZE) == SELFEXE_SEALS_SIZE
         && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) != 0
         && (seals & F_SEAL_SEAL) != 0;
}

static int
memfd_for_exec (void)
{
  /* MFD_EXEC: on kernels with vm.memfd_noexec the default may be a
   * non-executable memfd; older kernels do not know the flag. */
  int fd = memfd_create ("brig", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0 && errno == EINVAL)
    fd = memfd_create ("brig", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  return fd;
}

/* How much of the ELF file src (size bytes) the kernel and the program
 * read when it runs: up to the end of the last segment (or of the program
 * headers). What follows (symbol table, debug info, section headers) is
 * never read at run time, and leaving it out halves the copy of an
 * unstripped build: the copy costs ~2 us per 4 KiB page of shmem. Falls
 * back to the whole file on anything unexpected. */
static off_t
elf_runtime_size (int src, off_t size)
{
  ElfW (Ehdr) eh;
  ElfW (Phdr) ph[64];
  off_t end;

  if (pread (src, &eh, sizeof eh, 0) != (ssize_t) sizeof eh
      || memcmp (eh.e_ident, ELFMAG, SELFMAG) != 0
      || eh.e_phentsize != sizeof ph[0] || eh.e_phnum == 0
      || eh.e_phnum > BRIG_ARRAY_SIZE (ph))
    return size;
  end = (off_t) (eh.e_phoff + (off_t) eh.e_phnum * (off_t) sizeof ph[0]);
  if ((off_t) eh.e_phoff < 0 || end > size
      || pread (src, ph, (size_t) eh.e_phnum * sizeof ph[0], (off_t) eh.e_phoff)
             != (ssize_t) (eh.e_phnum * sizeof ph[0]))
    return size;
  for (size_t i = 0; i < eh.e_phnum; i++)
    {
      off_t seg_end = (off_t) (ph[i].p_offset + ph[i].p_filesz);
      if (seg_end < (off_t) ph[i].p_offset || seg_end > size)
        return size;
      if (seg_end > end)
        end = seg_end;
    }
  return end < (off_t) sizeof eh ? size : end;
}

/* Copy the first size bytes of the open binary src into a new sealed
 * memfd. */
static int
sealed_copy (int src, off_t size, brig_error *err)
{
  _cleanup_close_ int mfd = memfd_for_exec ();
  off_t done = 0;

  if (mfd < 0)
    return brig_error_errno (err, "memfd_create");
  /* Sizing first lets the copy fill the file without growing it page by
   * page (measured: ~15% faster than growing). */
  if (ftruncate (mfd, size) < 0)
    return brig_error_errno (err, "size the memfd copy to %lld bytes", (long long) size);
  while (done < size)
    {
      /* sendfile: the page cache of the binary straight into the memfd;
       * copy_file_range refuses (EXDEV) between different filesystems. */
      ssize_t n = sendfile (mfd, src, &done, (size_t) (size - done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return brig_error_errno (err, "copy /proc/self/exe into a memfd");
      if (n == 0)
        return brig_error_say (err, EIO, "copy /proc/self/exe into a memfd: "
                               "the binary shrank during the copy");
    }
  /* F_SEAL_EXEC (Linux 6.3) also fixes the mode; without it the content
   * is still immutable, which is what matters. */
  if (fcntl (mfd, F_ADD_SEALS, SELFEXE_SEALS_SIZE | F_SEAL_EXEC) < 0
      && (errno != EINVAL || fcntl (mfd, F_ADD_SEALS, SELFEXE_SEALS_SIZE) < 0))
    return brig_error_errno (err, "seal the memfd copy of the binary");
  /* F_SEAL_WRITE waits for every page to be unpinned, and a page just
   * written on another CPU can stay in that CPU's LRU batch: EBUSY after
   * ~0.4 s (seen once in a few thousand creates). F_SEAL_FUTURE_WRITE
   * (Linux 5.1) does not wait and refuses the same writes. */
  if (fcntl (mfd, F_ADD_SEALS, F_SEAL_WRITE) < 0
      && (errno != EBUSY || fcntl (mfd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) < 0))
    return brig_error_errno (err, "seal the memfd copy of the binary against writes");
  if (fcntl (mfd, F_ADD_SEALS, F_SEAL_SEAL) < 0)
    return brig_error_errno (err, "seal the memfd copy's seals");
  if (!fd_is_sealed (mfd))
    return brig_error_say (err, EPERM, "the memfd copy of the binary did not keep its seals");
  return brig_steal_fd (mfd);
}

/* Re-execute the binary src refers to through a detached read-only bind
 * mount of it. Returns -errno when the kernel or our privileges do not
 * allow it (the caller falls back to the sealed copy); does not return on
 * success. */
static int
exec_from_detached_mount (int src, char **argv)
{
  /* Not AT_RECURSIVE: a file has no submounts. OPEN_TREE_CLOEXEC (added by
   * brig_open_tree) is what dissolves the mount at the execve. */
  _cleanup_close_ int tree = brig_open_tree (src, "", OPEN_TREE_CLONE | AT_EMPTY_PATH);
  int r;

  if (tree < 0)
    return tree;
  /* NOSUID: a setuid or file-capability bit on the binary gives nothing
   * through this mount (nor to a container program that executes it), as
   * with the memfd copy. */
  r = brig_mount_setattr_fd (tree, false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                             | MOUNT_ATTR_NODEV, 0, 0, -1);
  if (r < 0)
    return r;
  brig_debug ("re-executing from a detached read-only mount of the binary");
  execveat (tree, "", argv, environ, AT_EMPTY_PATH);
  return -errno;
}

int brig_selfexe_readonly;

int
brig_selfexe_seal (char **argv, brig_error *err)
{
  _cleanup_close_ int src = -1;
  _cleanup_close_ int mfd = -1;
  struct stat st;
  off_t size;

  /* A binary on a read-only mount cannot be reopened for writing through
   * /proc/PID/exe: the write needs that same mount, which the container can
   * neither remount nor reach from its own mount namespace. That is our own
   * detached mount after the re-exec below (checked first: the common
   * case), an operator's `mount --bind -o ro` of brig over itself, or a
   * read-only /usr. Asked of the kernel (statfs of the exe's mount, through
   * the magic link: one call, no fd), never of the environment. */
  struct statfs sf;
  if (brig_selfexe_readonly)
    return 0;
  if (statfs ("/proc/self/exe", &sf) < 0)
    return brig_error_errno (err, "statfs /proc/self/exe");
  if (sf.f_flags & ST_RDONLY)
    {
      brig_debug ("the runtime binary is on a read-only mount: run it in place");
      return 0;
    }
  src = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (src < 0)
    return brig_error_errno (err, "open /proc/self/exe");
  /* Only the kernel can say we already run from a sealed copy, and only
   * of a memfd (shmem, TMPFS_MAGIC): F_GET_SEALS fails on anything else,
   * so a binary elsewhere does not ask. */
  if (sf.f_type == TMPFS_MAGIC && fd_is_sealed (src))
    return 0;
  /* Returns only when this kernel or these privileges cannot. */
  int r = exec_from_detached_mount (src, argv);
  brig_debug ("no detached read-only mount of the binary (%s): make a sealed copy",
              strerror (-r));
  if (fstat (src, &st) < 0)
    return brig_error_errno (err, "stat /proc/self/exe");
  size = elf_runtime_size (src, st.st_size);
  mfd = sealed_copy (src, size, err);
  if (mfd < 0)
    return brig_error_wrap (err, "make a sealed copy of the runtime binary");
  brig_debug ("re-executing from a sealed memfd copy of the binary (%lld of %lld bytes)",
              (long long) size, (long long) st.st_size);
  /* Every fd the caller passed has no FD_CLOEXEC (its execve of brig would
   * have closed it), so all survive; ours (src, mfd, the log) are
   * O_CLOEXEC and go. The memfd stays reachable only as exe_file. */
  execveat (mfd, "", argv, environ, AT_EMPTY_PATH);
  return brig_error_errno (err, "re-execute the sealed copy of the runtime binary");
}
