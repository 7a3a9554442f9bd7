/* error.h: the one error type of libbri.
 *
 * Every libbri function that can fail returns 0 or a negative BRI_E* code and
 * fills a caller-owned bri_error with a message a user can act on: the file,
 * the byte offset when there is one, and what was expected. The library never
 * prints and never exits; daemon/ decides how to report and which exit code. */
#ifndef BRI_ERROR_H
#define BRI_ERROR_H

#include <stddef.h>

enum {
  BRI_OK = 0,
  BRI_EINVAL = -1,       /* bad argument or usage */
  BRI_EIO = -2,          /* system call failed (errno in message) */
  BRI_ECORRUPT = -3,     /* on-disk bytes do not follow the format */
  BRI_EUNSUPPORTED = -4, /* valid but not handled: unknown flag, version, encoding */
  BRI_ENOMEM = -5,
  BRI_ENOTFOUND = -6,    /* no such table, version, column or row */
  BRI_ECONFLICT = -7,    /* a concurrent commit changed what this operation relies on */
  BRI_ETAKEN = -8,       /* another writer committed the version we tried first: retry */
  BRI_ECANCELLED = -9,   /* the caller asked the operation to stop */
  BRI_ENOTEMPTY = -10,   /* a directory to delete still holds entries */
  BRI_ELEASE = -11,      /* this process no longer holds the lease on its job: it must not act */
};

typedef struct bri_error {
  int code;
  char msg[1024];
} bri_error;

/* Sets err (if non-NULL) and returns code. printf-style message. */
int bri_error_set(bri_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the existing message with more context ("reading X: <old>"). */
int bri_error_wrap(bri_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Fills err with "<what> <path>: <strerror(errno)>" and returns BRI_EIO. */
int bri_error_errno(bri_error *err, const char *what, const char *path);

void bri_error_clear(bri_error *err);

/* Short name of a code ("corrupt", "io", ...). */
const char *bri_error_name(int code);

#endif
