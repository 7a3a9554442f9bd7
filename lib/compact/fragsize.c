/* fragsize.c: a fragment's size as a compaction counts it (see
 * fragsize.h). One pass over the fragments the planner could merge; each
 * data file's sidecar directory is asked through the run's size cache. */
#include "compact/fragsize.h"

#include <stdlib.h>

#include "compact/optin.h"
#include "lance/table/manifest.h"
#include "lance/table/bri.h"

bool bri_compact_counts_payload(bri_strategy s, unsigned min_reader, const bri_table *t,
                                const Lance__Table__Manifest *m) {
  if (bri_manifest_blobs_managed(m)) return false; /* compacted as managed, whatever is asked (execute.h) */
  switch (s) {
  case BRI_STRATEGY_COPY: return true;
  case BRI_STRATEGY_AUTO: /* execute.h: bri for a BRI table, managed where min_reader lets it
                           * switch the table, else link where links exist, else copy */
    return !bri_manifest_has_bri(m) &&
           !(min_reader >= BRI_MANAGED_MIN_READER && bri_managed_optin_applies(m)) &&
           !(bri_store_caps(t->store) & BRI_STORE_CAP_LINK);
  default: return false;
  }
}

uint64_t bri_fragment_data_bytes(const Lance__Table__DataFragment *f) {
  uint64_t b = 0;
  for (size_t k = 0; k < f->n_files; k++) b += f->files[k]->file_size_bytes;
  return b;
}

int bri_fragment_payloads(const bri_table *t, const bri_manifest *bm, const bri_compact_options *o,
                          bri_sidecar_sizes *sizes, uint64_t *payload, bri_error *err) {
  const Lance__Table__Manifest *m = bm->pb;
  int rc = 0;
  for (size_t i = 0; i < m->n_fragments && !rc; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    payload[i] = 0;
    if (f->physical_rows >= o->target_rows_per_fragment || bri_fragment_data_bytes(f) >= o->target_fragment_bytes)
      continue; /* at a target whatever its payload */
    uint64_t bytes = 0;
    for (size_t k = 0; k < f->n_files && !rc; k++) {
      char *dir = NULL;
      bri_store *st;
      uint64_t b = 0;
      if (!(rc = bri_table_sidecar_dir(t, m, f->files[k], &dir, err)) &&
          !(rc = bri_table_store_of(t, m, dir, &st, err)))
        rc = bri_sidecar_sizes_dir_bytes(sizes, st, dir, &b, err);
      if (rc) bri_error_wrap(err, "%s: measuring fragment %llu's payload", bm->path, (unsigned long long)f->id);
      bytes += b;
      free(dir);
    }
    /* copy moves only what live rows reference */
    uint64_t live = bri_fragment_live_rows(f);
    payload[i] = f->physical_rows ? (uint64_t)((double)bytes * (double)live / (double)f->physical_rows) : 0;
  }
  return rc;
}
