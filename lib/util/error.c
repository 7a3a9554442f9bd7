/* error.c: filling bri_error (see error.h). Messages are truncated, never
 * overflowed; wrapping keeps the innermost cause at the end of the message. */
#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int bri_error_set(bri_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

int bri_error_wrap(bri_error *err, const char *fmt, ...) {
  if (!err) return BRI_EINVAL;
  char prefix[512], old[sizeof err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  /* prefix, ": ", then as much of the old message as fits */
  size_t n = strnlen(prefix, sizeof err->msg - 3);
  memcpy(err->msg, prefix, n);
  memcpy(err->msg + n, ": ", 2);
  size_t room = sizeof err->msg - n - 3;
  size_t m = strnlen(old, room);
  memcpy(err->msg + n + 2, old, m);
  err->msg[n + 2 + m] = '\0';
  return err->code;
}

int bri_error_errno(bri_error *err, const char *what, const char *path) {
  int e = errno;
  return bri_error_set(err, BRI_EIO, "%s %s: %s", what, path, strerror(e));
}

void bri_error_clear(bri_error *err) {
  if (err) {
    err->code = 0;
    err->msg[0] = '\0';
  }
}

const char *bri_error_name(int code) {
  switch (code) {
  case BRI_OK: return "ok";
  case BRI_EINVAL: return "invalid";
  case BRI_EIO: return "io";
  case BRI_ECORRUPT: return "corrupt";
  case BRI_EUNSUPPORTED: return "unsupported";
  case BRI_ENOMEM: return "nomem";
  case BRI_ENOTFOUND: return "notfound";
  case BRI_ECONFLICT: return "conflict";
  case BRI_ETAKEN: return "version-taken";
  case BRI_ECANCELLED: return "cancelled";
  case BRI_ENOTEMPTY: return "not-empty";
  case BRI_ELEASE: return "lease-lost";
  default: return "error";
  }
}
