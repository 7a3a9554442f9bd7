/* random.c: random bytes (see random.h). */
#include "util/random.h"

#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

void bri_random_bytes(void *buf, size_t n) {
  uint8_t *b = buf;
  size_t got = 0;
  while (got < n) {
    ssize_t k = getrandom(b + got, n - got, 0);
    if (k > 0) got += (size_t)k;
    else if (errno != EINTR) break;
  }
}
