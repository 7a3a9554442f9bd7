/* plan.c: compaction planning (see plan.h). One pass over the fragment list
 * builds runs of candidates; a second splits each run into size tiers and
 * the tiers into bins of about the targets. Index
 * coverage is read from each index's fragment bitmap (portable Roaring); an
 * index without a bitmap is taken to cover every fragment, the safe reading. */
#include "compact/plan.h"

#include "compact/fragsize.h"

#include <errno.h>
#include <math.h>
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>


void bri_compact_options_default(bri_compact_options *o) {
  memset(o, 0, sizeof *o);
  o->target_rows_per_fragment = 1024 * 1024;
  o->target_fragment_bytes = BRI_TARGET_FRAGMENT_BYTES;
  o->materialize_deletions = true;
  o->materialize_deletions_threshold = 0.1;
  o->repack_threshold = 0.3;
}

static const char *config_get(const Lance__Table__Manifest *m, const char *key) {
  for (size_t i = 0; i < m->n_config; i++)
    if (m->config[i]->key && !strcmp(m->config[i]->key, key)) return m->config[i]->value;
  return NULL;
}

static int cfg_u64(const bri_manifest *bm, const char *key, uint64_t *out, bri_error *err) {
  const char *v = config_get(bm->pb, key);
  if (!v) return 0;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-')
    return bri_error_set(err, BRI_EINVAL, "%s: config %s = \"%s\" is not a non-negative integer",
                         bm->path, key, v);
  *out = x;
  return 0;
}

static int cfg_double(const bri_manifest *bm, const char *key, double *out, bri_error *err) {
  const char *v = config_get(bm->pb, key);
  if (!v) return 0;
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !isfinite(x) || x < 0)
    return bri_error_set(err, BRI_EINVAL, "%s: config %s = \"%s\" is not a non-negative number",
                         bm->path, key, v);
  *out = x;
  return 0;
}

static int cfg_bool(const bri_manifest *bm, const char *key, bool *out, bri_error *err) {
  const char *v = config_get(bm->pb, key);
  if (!v) return 0;
  if (!strcmp(v, "true")) *out = true;
  else if (!strcmp(v, "false")) *out = false;
  else
    return bri_error_set(err, BRI_EINVAL, "%s: config %s = \"%s\" is not true or false",
                         bm->path, key, v);
  return 0;
}

int bri_compact_options_from_config(const bri_manifest *m, bri_compact_options *o,
                                    bri_error *err) {
  int rc;
  if ((rc = cfg_u64(m, "lance.compaction.target_rows_per_fragment", &o->target_rows_per_fragment, err)) ||
      (rc = cfg_bool(m, "lance.compaction.materialize_deletions", &o->materialize_deletions, err)) ||
      (rc = cfg_double(m, "lance.compaction.materialize_deletions_threshold",
                       &o->materialize_deletions_threshold, err)) ||
      (rc = cfg_u64(m, "lance.compaction.max_source_fragments", &o->max_source_fragments, err)) ||
      (rc = cfg_u64(m, "lance.compaction.max_source_rows", &o->max_source_rows, err)) ||
      (rc = cfg_u64(m, "lance.compaction.max_source_bytes", &o->max_source_bytes, err)))
    return rc;
  if (o->target_rows_per_fragment == 0)
    return bri_error_set(err, BRI_EINVAL, "%s: lance.compaction.target_rows_per_fragment is 0",
                         m->path);
  return 0;
}

/* Index coverage of each fragment as a bit set over the indices, as Lance
 * reads it (compact/fri.h: through the fragment reuse index; an index without
 * a bitmap covers everything). At most 64 distinct indices are told apart;
 * more are folded into bit 63, which only makes bins stricter. held[i] is set
 * when an index brid cannot carry covers fragment i. */
static int coverage(const bri_manifest *m, const bri_index_views *iv, uint64_t **out, bool **held,
                    bri_error *err) {
  const Lance__Table__Manifest *pb = m->pb;
  uint64_t *cov = calloc(pb->n_fragments ? pb->n_fragments : 1, sizeof *cov);
  bool *h = calloc(pb->n_fragments ? pb->n_fragments : 1, sizeof *h);
  if (!cov || !h) {
    free(cov), free(h);
    return bri_error_set(err, BRI_ENOMEM, "out of memory planning");
  }
  for (size_t k = 0; k < iv->n; k++) {
    uint64_t bit = (uint64_t)1 << (k < 63 ? k : 63);
    for (size_t i = 0; i < pb->n_fragments; i++)
      if (bri_index_view_covers(&iv->v[k], pb->fragments[i]->id)) {
        cov[i] |= bit;
        h[i] |= bri_index_view_holds(&iv->v[k], pb->fragments[i]);
      }
  }
  *out = cov;
  *held = h;
  return 0;
}

/* True when rewriting f needs the fragment reuse index: no stable row ids
 * and an index covers it (cov), or an earlier version produced it. */
static bool remapped(const bri_index_views *iv, const Lance__Table__DataFragment *f, uint64_t cov) {
  return !iv->stable && (cov || (f->id <= UINT32_MAX &&
                                 roaring_bitmap_contains(iv->fri_cover, (uint32_t)f->id)));
}

typedef struct cand {
  size_t first, count;
  bool alone_ok; /* some member compacts by itself (deletions or repack) */
  uint64_t cov;
} cand;

/* What one planning pass keeps per fragment. */
typedef struct frag_info {
  uint64_t size; /* as the size rule counts it */
  bool itself;   /* compacts even alone: deletions past the threshold, a low pack */
  int hold;      /* a bri_hold, or -1 */
} frag_info;

static bool reached(uint64_t rows, uint64_t size, const bri_compact_options *o) {
  return rows >= o->target_rows_per_fragment || size >= o->target_fragment_bytes;
}

static int push_bin(bri_plan *p, size_t *cap, const Lance__Table__Manifest *pb, const frag_info *fi, size_t start,
                    size_t len) {
  if (p->n_bins == *cap) {
    *cap = *cap ? *cap * 2 : 8;
    bri_plan_bin *nb = realloc(p->bins, *cap * sizeof *nb);
    if (!nb) return -1;
    p->bins = nb;
  }
  bri_plan_bin *b = &p->bins[p->n_bins++];
  memset(b, 0, sizeof *b);
  b->first = start, b->count = len;
  for (size_t i = start; i < start + len; i++) {
    const Lance__Table__DataFragment *f = pb->fragments[i];
    b->physical_rows += f->physical_rows;
    b->deleted_rows += f->physical_rows - bri_fragment_live_rows(f);
    b->rows += bri_fragment_live_rows(f);
    b->bytes += bri_fragment_data_bytes(f);
    b->size += fi[i].size;
  }
  return 0;
}

/* Appends the bins of fragments [start, end), split to about the targets
 * (Lance's split_for_size, by rows or bytes: take fragments until a target
 * is reached; keep the cut only if what remains still reaches one, else
 * the rest joins the last bin). */
static int push_split(bri_plan *p, size_t *cap, const Lance__Table__Manifest *pb, const frag_info *fi,
                      size_t start, size_t end, const bri_compact_options *o) {
  while (start < end) {
    size_t len = 0;
    uint64_t rows = 0, size = 0;
    for (; !reached(rows, size, o) && start + len < end; len++) {
      rows += bri_fragment_live_rows(pb->fragments[start + len]);
      size += fi[start + len].size;
    }
    uint64_t rest_rows = 0, rest_size = 0;
    for (size_t i = start + len; i < end; i++) {
      rest_rows += bri_fragment_live_rows(pb->fragments[i]);
      rest_size += fi[i].size;
    }
    if (!reached(rest_rows, rest_size, o)) len = end - start;
    if (push_bin(p, cap, pb, fi, start, len)) return -1;
    start += len;
  }
  return 0;
}

/* Groups run c by size tiers (plan.h), from its newest end: an older
 * fragment joins the group after it when it compacts by itself, is below
 * the floor, or is at most half again as large as the group (1.5: appends
 * of about one size merge whatever their few bytes of difference, and the
 * tiers still grow geometrically); otherwise it starts the next
 * group, and is held back when that group stays a fragment of its own.
 * Group boundaries go to starts (from the newest), then the bins in
 * manifest order. */
static int push_tiers(bri_plan *p, size_t *cap, const Lance__Table__Manifest *pb, frag_info *fi, cand c,
                      size_t *starts, const bri_compact_options *o) {
  uint64_t floor = o->target_fragment_bytes / BRI_PLAN_TIER_FLOOR_DIV;
  size_t n = 0, end = c.first + c.count;
  while (end > c.first) {
    size_t start = end - 1;
    uint64_t sum = fi[start].size;
    while (start > c.first) {
      const frag_info *g = &fi[start - 1];
      if (!g->itself && g->size >= floor && g->size > sum && g->size - sum > sum / 2) break;
      sum += g->size;
      start--;
    }
    starts[n++] = start;
    end = start;
  }
  for (size_t k = n; k-- > 0;) {
    size_t start = starts[k], stop = k ? starts[k - 1] : c.first + c.count;
    if (stop - start > 1 || fi[start].itself) {
      if (push_split(p, cap, pb, fi, start, stop, o)) return -1;
    } else if (k > 0) {
      fi[start].hold = BRI_HOLD_LARGER; /* turned away by the newer group */
    }
  }
  return 0;
}

int bri_compact_plan(const bri_table *t, const bri_manifest *m, const bri_compact_options *o,
                     const bri_plan_hints *h, bri_plan **out, bri_error *err) {
  *out = NULL;
  const Lance__Table__Manifest *pb = m->pb;
  const bool *repack_wanted = h ? h->repack_wanted : NULL;
  const uint64_t *payload = h ? h->payload_bytes : NULL;
  uint64_t *cov = NULL;
  bool *held = NULL;
  bri_index_views *iv = NULL;
  int rc = bri_index_views_load(t, m, &iv, err);
  if (!rc) rc = coverage(m, iv, &cov, &held, err);
  if (rc) {
    bri_index_views_free(iv);
    return rc;
  }
  size_t nf = pb->n_fragments ? pb->n_fragments : 1;
  bri_plan *p = calloc(1, sizeof *p);
  cand *cands = calloc(nf, sizeof *cands);
  frag_info *fi = calloc(nf, sizeof *fi);
  size_t *starts = calloc(nf, sizeof *starts);
  if (p) p->views = iv;
  else bri_index_views_free(iv);
  if (p) p->held = calloc(nf, sizeof *p->held);
  if (!p || !cands || !fi || !starts || !p->held) {
    free(cov), free(held), free(cands), free(fi), free(starts), bri_plan_free(p);
    return bri_error_set(err, BRI_ENOMEM, "out of memory planning");
  }
  p->read_version = pb->version;
  p->target_fragment_bytes = o->target_fragment_bytes;
  p->counts_payload = payload != NULL;
  size_t n_cands = 0;
  bool open = false;
  for (size_t i = 0; i < pb->n_fragments; i++) {
    const Lance__Table__DataFragment *f = pb->fragments[i];
    uint64_t deleted = f->physical_rows - bri_fragment_live_rows(f);
    double share = f->physical_rows ? (double)deleted / (double)f->physical_rows : 0;
    fi[i].size = bri_fragment_data_bytes(f) + (payload ? payload[i] : 0);
    fi[i].hold = -1;
    fi[i].itself = (o->materialize_deletions && o->materialize_deletions_threshold < 1.0 &&
                    share > o->materialize_deletions_threshold) ||
                   (repack_wanted && repack_wanted[i]);
    bool few_rows = f->physical_rows < o->target_rows_per_fragment;
    bool neighbours = few_rows && fi[i].size < o->target_fragment_bytes;
    bool candidate = fi[i].itself || neighbours;
    if (candidate && held[i]) {
      /* an index brid cannot carry covers it: leave it (plan.h) */
      fi[i].hold = BRI_HOLD_INDEX;
      candidate = false;
    } else if (!candidate && few_rows) {
      fi[i].hold = BRI_HOLD_AT_TARGET; /* a candidate by Lance's rows, not by its size */
    }
    if (!candidate) {
      open = false;
      continue;
    }
    /* same index set; ascending ids where the group goes into the fragment
     * reuse index, which maps rows in old-fragment order (Lance versions
     * before 12 read it in id order) */
    bool ordered = f->id > pb->fragments[i - 1 + !i]->id ||
                   (!remapped(iv, pb->fragments[i], cov[i]) &&
                    !remapped(iv, pb->fragments[i - 1 + !i], cov[i]));
    if (open && cands[n_cands - 1].cov == cov[i] && ordered) {
      cands[n_cands - 1].count++;
      cands[n_cands - 1].alone_ok |= fi[i].itself;
    } else {
      cands[n_cands++] = (cand){i, 1, fi[i].itself, cov[i]};
      open = true;
    }
  }
  size_t cap = 0;
  for (size_t k = 0; k < n_cands && !rc; k++) {
    if (cands[k].count == 1 && !cands[k].alone_ok) continue; /* nothing to merge with */
    if (push_tiers(p, &cap, pb, fi, cands[k], starts, o))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory planning");
  }
  for (size_t i = 0; i < pb->n_fragments; i++)
    if (fi[i].hold >= 0) p->held[p->n_held++] = (bri_plan_held){pb->fragments[i]->id, (bri_hold)fi[i].hold, fi[i].size};
  /* budgets: keep whole bins, in order, while they fit (the first always) */
  uint64_t frags = 0, rows = 0, bytes = 0;
  for (size_t k = 0; k < p->n_bins && !rc; k++) {
    bri_plan_bin *b = &p->bins[k];
    frags += b->count, rows += b->physical_rows, bytes += b->bytes;
    bool over = (o->max_source_fragments && frags > o->max_source_fragments) ||
                (o->max_source_rows && rows > o->max_source_rows) ||
                (o->max_source_bytes && bytes > o->max_source_bytes);
    if (over && k > 0) {
      p->n_bins = k;
      p->budget_exhausted = true;
    }
  }
  free(cov), free(held), free(cands), free(fi), free(starts);
  if (rc) {
    bri_plan_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

const char *bri_hold_name(bri_hold why) {
  switch (why) {
  case BRI_HOLD_INDEX: return "an index brid cannot carry covers it";
  case BRI_HOLD_AT_TARGET: return "at target size";
  case BRI_HOLD_LARGER: return "larger than the newer fragments";
  }
  return "?";
}

void bri_plan_free(bri_plan *p) {
  if (!p) return;
  bri_index_views_free(p->views);
  free(p->bins);
  free(p->held);
  free(p);
}

json_t *bri_plan_to_json(const bri_plan *p, const bri_manifest *m) {
  json_t *bins = json_array(), *held = json_array();
  for (size_t k = 0; k < p->n_bins; k++) {
    const bri_plan_bin *b = &p->bins[k];
    json_t *ids = json_array();
    for (size_t i = b->first; i < b->first + b->count; i++)
      json_array_append_new(ids, json_integer((json_int_t)m->pb->fragments[i]->id));
    json_array_append_new(bins, json_pack("{s:o, s:I, s:I, s:I, s:I, s:I}", "fragments", ids, "rows",
                                          (json_int_t)b->rows, "physical_rows",
                                          (json_int_t)b->physical_rows, "deleted_rows",
                                          (json_int_t)b->deleted_rows, "data_bytes",
                                          (json_int_t)b->bytes, "size_bytes", (json_int_t)b->size));
  }
  for (size_t i = 0; i < p->n_held; i++)
    json_array_append_new(held, json_pack("{s:I, s:s, s:I}", "fragment", (json_int_t)p->held[i].id, "reason",
                                          bri_hold_name(p->held[i].why), "size_bytes",
                                          (json_int_t)p->held[i].size));
  return json_pack("{s:I, s:I, s:b, s:o, s:o, s:o, s:b}", "read_version", (json_int_t)p->read_version,
                   "target_fragment_bytes", (json_int_t)p->target_fragment_bytes, "size_counts_payload",
                   p->counts_payload, "bins", bins, "indices", bri_index_views_to_json(p->views, m),
                   "held_back", held, "budget_exhausted", p->budget_exhausted);
}
