/* readahead.c: the read-ahead engine (see readahead.h).
 *
 * A ring of window slots: item i lives in slot i % window from when a
 * worker claims it until the consumer takes it. A worker may claim item i
 * only while i < taken + window, so claimed-but-not-taken items (running or
 * ready) never exceed the window. One mutex and two condition variables (work
 * for the workers, ready for the consumer) guard the ring; fn itself runs
 * outside the lock. Items are small (tens of microseconds), so wake-ups are
 * rationed: idle workers wake together once half the window is free, a
 * finished item wakes the consumer only when it is the item it waits for,
 * and the consumer makes an item no worker has claimed yet itself instead
 * of sleeping (so a read-ahead never costs more than no read-ahead when
 * the workers get no CPU). */
#include "util/readahead.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
  bool ready;
  int rc;
  void *item;
  bri_error err;
} slot;

struct bri_readahead {
  size_t n, depth, window; /* depth threads, window slots */
  bri_readahead_fn fn;
  bri_readahead_drop_fn drop;
  void *ctx;
  pthread_mutex_t lock;
  pthread_cond_t work, ready;
  size_t next_claim; /* first item no worker has claimed */
  size_t taken;      /* items the consumer has taken */
  size_t idle;       /* workers waiting for a free slot */
  bool stopping;
  slot *slots;
  pthread_t *threads;
  size_t n_threads;
};

static void *worker(void *arg) {
  bri_readahead *ra = arg;
  pthread_mutex_lock(&ra->lock);
  for (;;) {
    while (!ra->stopping && ra->next_claim < ra->n && ra->next_claim >= ra->taken + ra->window) {
      ra->idle++;
      pthread_cond_wait(&ra->work, &ra->lock);
      ra->idle--;
    }
    if (ra->stopping || ra->next_claim >= ra->n) break;
    size_t i = ra->next_claim++;
    pthread_mutex_unlock(&ra->lock);
    slot r = {.ready = true};
    r.rc = ra->fn(ra->ctx, i, &r.item, &r.err);
    pthread_mutex_lock(&ra->lock);
    ra->slots[i % ra->window] = r;
    if (i == ra->taken) pthread_cond_signal(&ra->ready); /* the one the consumer waits for */
  }
  pthread_mutex_unlock(&ra->lock);
  return NULL;
}

int bri_readahead_start(size_t n, size_t depth, bri_readahead_fn fn, bri_readahead_drop_fn drop,
                        void *ctx, bri_readahead **out, bri_error *err) {
  *out = NULL;
  if (depth > BRI_READAHEAD_MAX) depth = BRI_READAHEAD_MAX;
  if (depth > n) depth = n; /* no more threads than items */
  bri_readahead *ra = calloc(1, sizeof *ra);
  if (!ra) return bri_error_set(err, BRI_ENOMEM, "read-ahead: out of memory");
  ra->n = n, ra->depth = depth, ra->fn = fn, ra->drop = drop, ra->ctx = ctx;
  ra->window = depth * BRI_READAHEAD_WINDOW < n ? depth * BRI_READAHEAD_WINDOW : n;
  if (depth == 0) {
    *out = ra;
    return 0;
  }
  ra->slots = calloc(ra->window, sizeof *ra->slots);
  ra->threads = calloc(depth, sizeof *ra->threads);
  if (!ra->slots || !ra->threads) {
    free(ra->slots), free(ra->threads), free(ra);
    return bri_error_set(err, BRI_ENOMEM, "read-ahead: out of memory");
  }
  pthread_mutex_init(&ra->lock, NULL);
  pthread_cond_init(&ra->work, NULL);
  pthread_cond_init(&ra->ready, NULL);
  for (size_t t = 0; t < depth; t++) {
    int e = pthread_create(&ra->threads[t], NULL, worker, ra);
    if (e) {
      bri_readahead_stop(ra);
      return bri_error_set(err, BRI_EIO, "read-ahead: cannot start a thread: %s", strerror(e));
    }
    ra->n_threads++;
  }
  *out = ra;
  return 0;
}

int bri_readahead_take(bri_readahead *ra, void **out, bri_error *err) {
  *out = NULL;
  if (ra->taken >= ra->n)
    return bri_error_set(err, BRI_EINVAL, "read-ahead: all %zu items were taken", ra->n);
  if (ra->depth == 0) return ra->fn(ra->ctx, ra->taken++, out, err);
  pthread_mutex_lock(&ra->lock);
  slot *s = &ra->slots[ra->taken % ra->window];
  slot r;
  if (ra->next_claim == ra->taken) {
    /* no worker got to it (they are busy, or starved of CPU): do it here
     * rather than sleep on them */
    ra->next_claim++;
    pthread_mutex_unlock(&ra->lock);
    memset(&r, 0, sizeof r);
    r.rc = ra->fn(ra->ctx, ra->taken, &r.item, &r.err);
    pthread_mutex_lock(&ra->lock);
  } else {
    while (!s->ready) pthread_cond_wait(&ra->ready, &ra->lock);
    r = *s;
    memset(s, 0, sizeof *s);
  }
  ra->taken++;
  /* idle workers wake once half the window is free, all together, rather
   * than one context switch per item */
  if (ra->idle && ra->taken + ra->window - ra->next_claim >= (ra->window + 1) / 2)
    pthread_cond_broadcast(&ra->work);
  pthread_mutex_unlock(&ra->lock);
  if (r.rc) {
    if (err) *err = r.err;
    return r.rc;
  }
  *out = r.item;
  return 0;
}

void bri_readahead_stop(bri_readahead *ra) {
  if (!ra) return;
  if (ra->depth) {
    pthread_mutex_lock(&ra->lock);
    ra->stopping = true;
    pthread_cond_broadcast(&ra->work);
    pthread_mutex_unlock(&ra->lock);
    for (size_t t = 0; t < ra->n_threads; t++) pthread_join(ra->threads[t], NULL);
    for (size_t k = 0; k < ra->window; k++)
      if (ra->slots[k].ready && ra->slots[k].item && ra->drop) ra->drop(ra->ctx, ra->slots[k].item);
    pthread_cond_destroy(&ra->work);
    pthread_cond_destroy(&ra->ready);
    pthread_mutex_destroy(&ra->lock);
  }
  free(ra->slots);
  free(ra->threads);
  free(ra);
}
