/* sd-bus, loaded on first use. Linking libsystemd (and through it libgcrypt,
 * liblzma, libzstd, liblz4, libgpg-error) into brig costs every command about
 * 1 MiB of RSS and a slower start, for a manager only --systemd-cgroup uses.
 * These definitions take the place of libsystemd's at link time and forward
 * to it once dlopen'ed; the variadic ones go through the v-variants. */
#ifdef HAVE_SYSTEMD
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <systemd/sd-bus.h>

#include "log.h"

static void *
sdbus_sym (const char *name)
{
  static void *lib;
  static bool failed;

  if (lib == NULL && !failed)
    {
      lib = dlopen ("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
      if (lib == NULL)
        {
          failed = true;
          brig_warn ("systemd cgroup manager: load libsystemd.so.0: %s", dlerror ());
        }
    }
  return lib ? dlsym (lib, name) : NULL;
}

#define SDBUS_FN(name) \
  static __typeof__ (name) *fn; \
  if (fn == NULL) \
    fn = (__typeof__ (name) *) sdbus_sym (#name)

int
sd_bus_open_system (sd_bus **ret)
{
  SDBUS_FN (sd_bus_open_system);
  return fn ? fn (ret) : -ENOSYS;
}

int
sd_bus_open_user (sd_bus **ret)
{
  SDBUS_FN (sd_bus_open_user);
  return fn ? fn (ret) : -ENOSYS;
}

sd_bus *
sd_bus_flush_close_unref (sd_bus *bus)
{
  SDBUS_FN (sd_bus_flush_close_unref);
  return fn ? fn (bus) : NULL;
}

int
sd_bus_call (sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error,
             sd_bus_message **reply)
{
  SDBUS_FN (sd_bus_call);
  return fn ? fn (bus, m, usec, ret_error, reply) : -ENOSYS;
}

int
sd_bus_process (sd_bus *bus, sd_bus_message **r)
{
  SDBUS_FN (sd_bus_process);
  return fn ? fn (bus, r) : -ENOSYS;
}

int
sd_bus_wait (sd_bus *bus, uint64_t timeout_usec)
{
  SDBUS_FN (sd_bus_wait);
  return fn ? fn (bus, timeout_usec) : -ENOSYS;
}

sd_bus_slot *
sd_bus_slot_unref (sd_bus_slot *slot)
{
  SDBUS_FN (sd_bus_slot_unref);
  return fn ? fn (slot) : NULL;
}

int
sd_bus_message_new_method_call (sd_bus *bus, sd_bus_message **m, const char *destination,
                                const char *path, const char *interface, const char *member)
{
  SDBUS_FN (sd_bus_message_new_method_call);
  return fn ? fn (bus, m, destination, path, interface, member) : -ENOSYS;
}

sd_bus_message *
sd_bus_message_unref (sd_bus_message *m)
{
  SDBUS_FN (sd_bus_message_unref);
  return fn ? fn (m) : NULL;
}

int
sd_bus_message_append (sd_bus_message *m, const char *types, ...)
{
  va_list ap;
  int r;
  SDBUS_FN (sd_bus_message_appendv);
  if (fn == NULL)
    return -ENOSYS;
  va_start (ap, types);
  r = fn (m, types, ap);
  va_end (ap);
  return r;
}

int
sd_bus_message_append_array (sd_bus_message *m, char type, const void *ptr, size_t size)
{
  SDBUS_FN (sd_bus_message_append_array);
  return fn ? fn (m, type, ptr, size) : -ENOSYS;
}

int
sd_bus_message_open_container (sd_bus_message *m, char type, const char *contents)
{
  SDBUS_FN (sd_bus_message_open_container);
  return fn ? fn (m, type, contents) : -ENOSYS;
}

int
sd_bus_message_close_container (sd_bus_message *m)
{
  SDBUS_FN (sd_bus_message_close_container);
  return fn ? fn (m) : -ENOSYS;
}

int
sd_bus_message_read (sd_bus_message *m, const char *types, ...)
{
  va_list ap;
  int r;
  SDBUS_FN (sd_bus_message_readv);
  if (fn == NULL)
    return -ENOSYS;
  va_start (ap, types);
  r = fn (m, types, ap);
  va_end (ap);
  return r;
}

int
sd_bus_call_method (sd_bus *bus, const char *destination, const char *path,
                    const char *interface, const char *member, sd_bus_error *ret_error,
                    sd_bus_message **reply, const char *types, ...)
{
  va_list ap;
  int r;
  SDBUS_FN (sd_bus_call_methodv);
  if (fn == NULL)
    return -ENOSYS;
  va_start (ap, types);
  r = fn (bus, destination, path, interface, member, ret_error, reply, types, ap);
  va_end (ap);
  return r;
}

int
sd_bus_match_signal (sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path,
                     const char *interface, const char *member,
                     sd_bus_message_handler_t callback, void *userdata)
{
  SDBUS_FN (sd_bus_match_signal);
  return fn ? fn (bus, ret, sender, path, interface, member, callback, userdata) : -ENOSYS;
}

void
sd_bus_error_free (sd_bus_error *e)
{
  SDBUS_FN (sd_bus_error_free);
  if (fn)
    fn (e);
}

int
sd_bus_error_is_set (const sd_bus_error *e)
{
  SDBUS_FN (sd_bus_error_is_set);
  return fn ? fn (e) : (e && e->name != NULL);
}
#endif
