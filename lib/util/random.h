/* random.h: random bytes for names that must not collide (UUIDs, data file
 * stems, staging files), from the kernel's getrandom(2). */
#ifndef BRI_RANDOM_H
#define BRI_RANDOM_H

#include <stddef.h>

/* Fills buf with n random bytes (getrandom, retried on EINTR; on a kernel
 * that has none, whatever it gave is kept: names stay distinct enough for
 * O_EXCL and put-if-absent to catch the rare clash). */
void bri_random_bytes(void *buf, size_t n);

/* A fresh random (v4) UUID in its 36-character text form. */
void bri_uuid_v4(char out[37]);

#endif
