/* random.c: random bytes and the names made of them (see random.h). */
#include "util/random.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
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

void bri_uuid_v4(char out[37]) {
  uint8_t u[16];
  bri_random_bytes(u, sizeof u);
  u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
  u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
           u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
           u[15]);
}
