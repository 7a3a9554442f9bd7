/* readahead.h: a bounded read-ahead engine, N items in flight.
 *
 * Compaction reads the metadata of thousands of fragments, one after the
 * other, and uses each for a short while. On a local disk a fragment costs
 * some system calls and a decode; on an object store every read is a round
 * trip of tens of milliseconds. The engine runs a caller's function (open a
 * fragment, read its descriptor pages: any reads through lib/storage, whose
 * stores are thread-safe) over items 0..n-1 on `depth` helper threads (of
 * a process-wide pool, kept between engines), at
 * most BRI_READAHEAD_WINDOW x depth items ahead of the consumer, and hands
 * the results back in item order. So up to `depth` requests overlap, the
 * work of opening (decoding protobuf) runs beside the consumer's, and
 * memory stays bounded by the window's items, whatever n is.
 *
 * The consumer takes item 0, 1, 2, ... in order; taking blocks until that
 * item is ready. A result owned by the engine and not taken (the consumer
 * stopped early, or failed) is released with the drop function. depth 0
 * runs the function in the consumer's thread when it takes the item (no
 * threads: the same results in the same order, for tests and for callers
 * that must not start threads). */
#ifndef BRI_READAHEAD_H
#define BRI_READAHEAD_H

#include <stddef.h>

#include "util/error.h"

/* Produces item i into *out (or fails filling err); runs on a worker thread,
 * possibly beside other calls for other items: ctx must be safe for that. */
typedef int (*bri_readahead_fn)(void *ctx, size_t i, void **out, bri_error *err);
/* Releases an item that was produced but never taken. */
typedef void (*bri_readahead_drop_fn)(void *ctx, void *item);

typedef struct bri_readahead bri_readahead;

/* Largest depth (helper threads) an engine runs. */
#define BRI_READAHEAD_MAX 64
/* Items made ahead per thread at most: workers that run ahead by a few
 * items each sleep and wake rarely, not once per item. */
#define BRI_READAHEAD_WINDOW 4

/* Starts producing items 0..n-1, depth ahead (0: in the consumer's thread;
 * above BRI_READAHEAD_MAX: that many). Fails only out of resources
 * (memory). Helpers that cannot be started leave their items to the
 * consumer, which makes what no helper claimed. */
int bri_readahead_start(size_t n, size_t depth, bri_readahead_fn fn, bri_readahead_drop_fn drop,
                        void *ctx, bri_readahead **out, bri_error *err);

/* The next item, in order: what fn produced for it, or its error. Taking
 * past item n-1 is BRI_EINVAL. */
int bri_readahead_take(bri_readahead *ra, void **out, bri_error *err);

/* Stops: waits for the calls running now, drops every result not taken,
 * frees the engine. NULL is a no-op. */
void bri_readahead_stop(bri_readahead *ra);

#endif
