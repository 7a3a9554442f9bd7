/* readahead.c: the read-ahead engine and the threads it runs on (see
 * readahead.h).
 *
 * A ring of window slots: item i lives in slot i % window from when a
 * helper claims it until the consumer takes it. A helper may claim item i
 * only while i < taken + window, so claimed-but-not-taken items (running or
 * ready) never exceed the window. One mutex and two condition variables (work
 * for the helpers, ready for the consumer) guard the ring; fn itself runs
 * outside the lock. Items are small (tens of microseconds), so wake-ups are
 * rationed: idle helpers wake together once half the window is free, a
 * finished item wakes the consumer only when it is the item it waits for,
 * and the consumer makes an item no helper has claimed yet itself instead
 * of sleeping (so a read-ahead never costs more than no read-ahead when
 * the helpers get no CPU).
 *
 * The helpers are threads of one process-wide pool, not the engine's own:
 * a daemon compacting thousands of small tables starts an engine or two per
 * table, and creating and ending depth threads each time cost more than
 * the reads they overlapped. An engine asks the pool for depth helpers;
 * idle pool threads answer first, new ones are started only for the
 * shortfall, and a thread idle for POOL_IDLE_SEC ends. A helper stays with
 * its engine until no item is left to claim (or the engine stops), then
 * goes back to the pool. Lock order: the pool's mutex, then an engine's. */
#include "util/readahead.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct slot {
  bool ready;
  int rc;
  void *item;
  bri_error err;
} slot;

struct bri_readahead {
  size_t n, depth, window; /* depth helpers, window slots */
  bri_readahead_fn fn;
  bri_readahead_drop_fn drop;
  void *ctx;
  pthread_mutex_t lock;
  pthread_cond_t work, ready, done;
  size_t next_claim; /* first item no helper has claimed */
  size_t taken;      /* items the consumer has taken */
  size_t idle;       /* helpers waiting for a free slot */
  size_t active;     /* helpers working for the engine */
  bool stopping;
  slot *slots;
  /* under the pool's mutex: helpers asked for and not yet sent, and the
   * engine's place in the pool's list of engines waiting for them */
  size_t wanted;
  bri_readahead *next_wanting;
};

/* A thread idle this long ends (a burst of jobs leaves no crowd behind). */
#define POOL_IDLE_SEC 30

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;            /* idle threads wait here (CLOCK_MONOTONIC) */
  pthread_once_t once;
  bri_readahead *head, *tail;   /* engines with wanted > 0, first come first served */
  size_t wanted;                /* the sum of their wanted */
  size_t idle;                  /* threads waiting on cv */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

static void pool_init(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&pool.cv, &a);
  pthread_condattr_destroy(&a);
}

/* Under pool.mu: the engine leaves the list of those waiting for helpers. */
static void pool_unlist(bri_readahead *ra) {
  bri_readahead **p = &pool.head, *prev = NULL;
  while (*p && *p != ra) prev = *p, p = &(*p)->next_wanting;
  if (!*p) return;
  *p = ra->next_wanting;
  if (pool.tail == ra) pool.tail = prev;
  pool.wanted -= ra->wanted;
  ra->wanted = 0;
  ra->next_wanting = NULL;
}

/* A helper's work for one engine: claim and make items while the window
 * allows, until none is left or the engine stops. */
static void help(bri_readahead *ra) {
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
  if (--ra->active == 0 && ra->stopping) pthread_cond_signal(&ra->done);
  pthread_mutex_unlock(&ra->lock);
}

static void *pool_thread(void *arg) {
  (void)arg;
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += POOL_IDLE_SEC;
    int e = 0;
    while (!pool.head && e != ETIMEDOUT) {
      pool.idle++;
      e = pthread_cond_timedwait(&pool.cv, &pool.mu, &until);
      pool.idle--;
    }
    if (!pool.head) break; /* idle for POOL_IDLE_SEC */
    bri_readahead *ra = pool.head;
    pool.wanted--;
    if (--ra->wanted == 0) pool_unlist(ra);
    /* counted as the engine's before the pool's mutex is let go: a stop
     * that unlists the engine after this waits for this helper */
    pthread_mutex_lock(&ra->lock);
    ra->active++;
    pthread_mutex_unlock(&ra->lock);
    pthread_mutex_unlock(&pool.mu);
    help(ra);
    pthread_mutex_lock(&pool.mu);
  }
  pthread_mutex_unlock(&pool.mu);
  return NULL;
}

/* Asks the pool for ra->depth helpers: idle threads are woken, new ones
 * started for the shortfall. An engine that gets fewer (no thread could
 * be started) still works: its consumer makes the items nobody claimed. */
static void pool_ask(bri_readahead *ra) {
  pthread_once(&pool.once, pool_init);
  pthread_mutex_lock(&pool.mu);
  ra->wanted = ra->depth;
  ra->next_wanting = NULL;
  if (pool.tail) pool.tail->next_wanting = ra;
  else pool.head = ra;
  pool.tail = ra;
  pool.wanted += ra->depth;
  size_t start = pool.wanted > pool.idle ? pool.wanted - pool.idle : 0;
  if (start > ra->depth) start = ra->depth;
  if (pool.idle) pthread_cond_broadcast(&pool.cv);
  pthread_mutex_unlock(&pool.mu);
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  for (size_t t = 0; t < start; t++) {
    pthread_t th;
    if (pthread_create(&th, &a, pool_thread, NULL) != 0) break;
  }
  pthread_attr_destroy(&a);
}

int bri_readahead_start(size_t n, size_t depth, bri_readahead_fn fn, bri_readahead_drop_fn drop,
                        void *ctx, bri_readahead **out, bri_error *err) {
  *out = NULL;
  if (depth > BRI_READAHEAD_MAX) depth = BRI_READAHEAD_MAX;
  if (depth > n) depth = n; /* no more helpers than items */
  bri_readahead *ra = calloc(1, sizeof *ra);
  if (!ra) return bri_error_set(err, BRI_ENOMEM, "read-ahead: out of memory");
  ra->n = n, ra->depth = depth, ra->fn = fn, ra->drop = drop, ra->ctx = ctx;
  ra->window = depth * BRI_READAHEAD_WINDOW < n ? depth * BRI_READAHEAD_WINDOW : n;
  if (depth == 0) {
    *out = ra;
    return 0;
  }
  if (!(ra->slots = calloc(ra->window, sizeof *ra->slots))) {
    free(ra);
    return bri_error_set(err, BRI_ENOMEM, "read-ahead: out of memory");
  }
  pthread_mutex_init(&ra->lock, NULL);
  pthread_cond_init(&ra->work, NULL);
  pthread_cond_init(&ra->ready, NULL);
  pthread_cond_init(&ra->done, NULL);
  pool_ask(ra);
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
    pthread_mutex_lock(&pool.mu);
    pool_unlist(ra); /* no helper is sent to it from here on */
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_lock(&ra->lock);
    ra->stopping = true;
    pthread_cond_broadcast(&ra->work);
    while (ra->active) pthread_cond_wait(&ra->done, &ra->lock);
    pthread_mutex_unlock(&ra->lock);
    for (size_t k = 0; k < ra->window; k++)
      if (ra->slots[k].ready && ra->slots[k].item && ra->drop) ra->drop(ra->ctx, ra->slots[k].item);
    pthread_cond_destroy(&ra->work);
    pthread_cond_destroy(&ra->ready);
    pthread_cond_destroy(&ra->done);
    pthread_mutex_destroy(&ra->lock);
  }
  free(ra->slots);
  free(ra);
}
