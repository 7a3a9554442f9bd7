/* test_util.c: small utilities: durations, string sets, string buffers, error wrapping, the INI reader. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.pb-c.h"
#include "testutil.h"
#include "util/arena.h"
#include "util/arrow_c.h"
#include "util/duration.h"
#include "util/readahead.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/ini.h"
#include "util/strbuf.h"
#include "util/strset.h"

START_TEST(test_durations) {
  static const struct { const char *s; int64_t v; } ok[] = {
      {"0", 0}, {"00", 0}, {"0s", 0}, {"90s", 90}, {"30m", 1800}, {"2h", 7200}, {"7d", 604800},
      {"1w", 604800}, {"1h30m", 5400}};
  int64_t v;
  bri_error err;
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    ck_assert_msg(bri_duration_parse(ok[i].s, "--x", &v, &err) == 0, "%s: %s", ok[i].s, err.msg);
    ck_assert_int_eq(v, ok[i].v);
  }
  const char *bad[] = {"", "h", "-1", "5y", "1.5h", "99999999999999999999", "9223372036854775807w",
                       "7", "90", "1h30", "0h5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(bri_duration_parse(bad[i], "--older-than", &v, &err), BRI_EINVAL);
    ck_assert_msg(strstr(err.msg, "--older-than") != NULL, "%s", err.msg);
  }
  /* a bare number says which units it could have meant */
  ck_assert_int_eq(bri_duration_parse("7", "--older-than", &v, &err), BRI_EINVAL);
  ck_assert_str_eq(err.msg, "--older-than: \"7\" has no unit: write 7s, 7m, 7h, 7d or 7w");
}
END_TEST

START_TEST(test_strset) {
  bri_strset s = {0};
  const char *words[] = {"b", "a", "c", "a", "b"};
  for (size_t i = 0; i < 5; i++) ck_assert(bri_strset_add(&s, words[i]));
  bri_strset_freeze(&s);
  ck_assert_uint_eq(s.n, 3);
  ck_assert(bri_strset_has(&s, "a") && bri_strset_has(&s, "c") && !bri_strset_has(&s, "d"));
  bri_strset_dispose(&s);
  ck_assert(!bri_strset_has(&s, "a"));
}
END_TEST

START_TEST(test_strbuf) {
  bri_strbuf b = BRI_STRBUF_INIT;
  char *empty = bri_strbuf_take(&b);
  ck_assert_str_eq(empty, "");
  free(empty);
  for (int i = 0; i < 1000; i++) bri_strbuf_printf(&b, "%d,", i);
  bri_strbuf_putc(&b, '!');
  bri_strbuf_add(&b, "ab\0c", 4);
  ck_assert_uint_eq(b.len, strlen(b.data) + 2); /* the NUL inside counts */
  ck_assert(strncmp(b.data, "0,1,2,", 6) == 0);
  ck_assert(memcmp(b.data + b.len - 5, "!ab\0c", 5) == 0);
  char *s = bri_strbuf_take(&b);
  ck_assert_ptr_null(b.data);
  ck_assert_uint_eq(b.len, 0);
  free(s);
  bri_strbuf_puts(&b, "x");
  b.oom = true; /* a failed allocation sticks: later appends do nothing, take says NULL */
  bri_strbuf_puts(&b, "more");
  ck_assert_uint_eq(b.len, 1);
  ck_assert_ptr_null(bri_strbuf_take(&b));
  ck_assert_ptr_null(b.data);
  ck_assert(!b.oom);
}
END_TEST

START_TEST(test_error_wrap_truncates_safely) {
  bri_error err;
  char big[3000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  bri_error_set(&err, BRI_ECORRUPT, "%s", big);
  ck_assert_uint_eq(strlen(err.msg), sizeof err.msg - 1);
  bri_error_wrap(&err, "context");
  ck_assert(strncmp(err.msg, "context: xxx", 12) == 0);
  ck_assert_uint_eq(strlen(err.msg), sizeof err.msg - 1);
  ck_assert_int_eq(err.code, BRI_ECORRUPT);
}
END_TEST

/* The one validity rule every reader of Arrow arrays uses (util/arrow_c.h). */
START_TEST(test_arrow_validity) {
  uint8_t bits[2] = {0x05, 0x80}; /* elements 0, 2 and 15 valid */
  const void *bufs[2] = {bits, NULL};
  struct ArrowArray a = {.length = 16, .null_count = 13, .n_buffers = 2, .buffers = bufs};
  ck_assert(bri_arrow_valid(&a, 0) && !bri_arrow_valid(&a, 1) && bri_arrow_valid(&a, 2));
  ck_assert(bri_arrow_valid(&a, 15) && !bri_arrow_valid(&a, 14));
  a.offset = 1, a.length = 15; /* the offset moves the window over the bitmap */
  ck_assert(!bri_arrow_valid(&a, 0) && bri_arrow_valid(&a, 1) && bri_arrow_valid(&a, 14));
  a.null_count = -1; /* not computed: the bitmap decides */
  ck_assert(!bri_arrow_valid(&a, 0) && bri_arrow_valid(&a, 1));
  a.null_count = 0; /* no nulls: the bitmap is not read */
  ck_assert(bri_arrow_valid(&a, 0));
  bufs[0] = NULL; /* no bitmap: valid, unless the null count says every element is null */
  a.null_count = -1;
  ck_assert(bri_arrow_valid(&a, 3));
  struct ArrowArray null_type = {.length = 4, .null_count = 4, .n_buffers = 0, .buffers = NULL};
  ck_assert(!bri_arrow_valid(&null_type, 2));
}
END_TEST

START_TEST(test_arena) {
  bri_arena a;
  bri_arena_init(&a, 64);
  /* aligned, distinct (empty ones aside), writable; small ones share chunks, large ones get their own */
  uint8_t *prev = NULL;
  for (size_t i = 0; i < 1000; i++) {
    size_t n = i % 7 == 0 ? 5000 : i % 13;
    uint8_t *p = bri_arena_alloc(&a, n);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % _Alignof(max_align_t), 0);
    memset(p, (int)i, n);
    if (!n) continue;
    if (prev) ck_assert_ptr_ne(p, prev);
    prev = p;
  }
  ck_assert_uint_ge(a.allocated, 143 * 5000);
  ck_assert_uint_lt(a.allocated, 3 * (143 * 5000 + 857 * 16));
  bri_arena_clear(&a);
  ck_assert_uint_eq(a.allocated, 0);
  ck_assert_ptr_nonnull(bri_arena_alloc(&a, 10));
  ck_assert_ptr_null(bri_arena_alloc(&a, SIZE_MAX - 8));
  /* protobuf-c decodes into it; freeing a message one by one does nothing */
  Lance__File__Field f = LANCE__FILE__FIELD__INIT;
  f.name = (char *)"name";
  f.has_id = 1, f.id = 7;
  uint8_t buf[32];
  size_t n = lance__file__field__pack(&f, buf);
  Lance__File__Field *g = lance__file__field__unpack(bri_arena_pb(&a), n, buf);
  ck_assert_ptr_nonnull(g);
  ck_assert_str_eq(g->name, "name");
  ck_assert_int_eq(g->id, 7);
  lance__file__field__free_unpacked(g, bri_arena_pb(&a));
  bri_arena_clear(&a);
}
END_TEST

/* A read-ahead item: its index, and who made it. */
typedef struct ra_ctx {
  size_t fail_at; /* this item fails */
  int made, dropped;
  pthread_mutex_t lock;
} ra_ctx;

static int ra_make(void *ctx, size_t i, void **out, bri_error *err) {
  ra_ctx *c = ctx;
  if (i == c->fail_at) return bri_error_set(err, BRI_ECORRUPT, "item %zu is bad", i);
  size_t *v = malloc(sizeof *v);
  *v = i * 10;
  *out = v;
  pthread_mutex_lock(&c->lock);
  c->made++;
  pthread_mutex_unlock(&c->lock);
  return 0;
}

static void ra_drop(void *ctx, void *item) {
  ra_ctx *c = ctx;
  c->dropped++;
  free(item);
}

START_TEST(test_readahead) {
  /* every depth hands out the same items in order, and an error at its item */
  size_t depths[] = {0, 1, 3, 8, 100};
  for (size_t d = 0; d < 5; d++) {
    ra_ctx c = {.fail_at = 37, .lock = PTHREAD_MUTEX_INITIALIZER};
    bri_readahead *ra;
    bri_error err = {0};
    ck_assert_int_eq(bri_readahead_start(50, depths[d], ra_make, ra_drop, &c, &ra, &err), 0);
    size_t i = 0;
    for (; i < 50; i++) {
      void *item;
      int rc = bri_readahead_take(ra, &item, &err);
      if (i == 37) {
        ck_assert_int_eq(rc, BRI_ECORRUPT);
        ck_assert_str_eq(err.msg, "item 37 is bad");
        ck_assert_ptr_null(item);
        break;
      }
      ck_assert_int_eq(rc, 0);
      ck_assert_uint_eq(*(size_t *)item, i * 10);
      free(item);
    }
    bri_readahead_stop(ra);
    /* what was made and never taken was dropped; nothing ran ahead by more than depth */
    ck_assert_int_eq(c.made - 37, c.dropped);
    ck_assert_int_le(c.dropped, (int)(depths[d] < BRI_READAHEAD_MAX ? depths[d] : BRI_READAHEAD_MAX) * BRI_READAHEAD_WINDOW);
  }
  /* taking past the end is refused; stopping early drops what is ready */
  ra_ctx c = {.fail_at = SIZE_MAX, .lock = PTHREAD_MUTEX_INITIALIZER};
  bri_readahead *ra;
  bri_error err = {0};
  ck_assert_int_eq(bri_readahead_start(2, 4, ra_make, ra_drop, &c, &ra, &err), 0);
  void *item;
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(bri_readahead_take(ra, &item, &err), 0);
    free(item);
  }
  ck_assert_int_eq(bri_readahead_take(ra, &item, &err), BRI_EINVAL);
  bri_readahead_stop(ra);
  ck_assert_int_eq(bri_readahead_start(1000, 4, ra_make, ra_drop, &c, &ra, &err), 0);
  bri_readahead_stop(ra);
  bri_readahead_stop(NULL);
}
END_TEST

START_TEST(test_path_join_and_strdupf) {
  static const char *cases[][3] = {{"a", "b", "a/b"},      {"a//", "/b", "a/b"},
                                   {"/t/", "data/x", "/t/data/x"}, {"a", "", "a/"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *p = bri_path_join(cases[i][0], cases[i][1]);
    ck_assert_str_eq(p, cases[i][2]);
    free(p);
  }
  char big[1000];
  memset(big, 'y', sizeof big - 1);
  big[sizeof big - 1] = 0;
  char *s = bri_strdupf("%s-%d", big, 42); /* longer than the stack buffer */
  ck_assert_uint_eq(strlen(s), sizeof big - 1 + 3);
  ck_assert_str_eq(s + sizeof big - 1, "-42");
  free(s);
  s = bri_strdupf("%.*s/%s", 3, "abcdef", "z");
  ck_assert_str_eq(s, "abc/z");
  free(s);
}
END_TEST

START_TEST(test_ini) {
  char *dir = bri_tmpdir(), *path = bri_path_join(dir, "config");
  bri_ini ini;
  bri_error err;
  ck_assert_int_eq(bri_ini_read(path, &ini, &err), 0); /* missing: empty */
  ck_assert_ptr_null(ini.path);
  ck_assert_uint_eq(ini.n, 0);
  const char *text = "# comment\n[default]\nregion = eu-west-1 \r\n; another\n\n[ profile dev ]\n"
                     "s3 =\n  addressing_style = path\n  endpoint_url=http://h:1\nregion=us-east-2\n"
                     "  indented = after a value, not nested\n";
  bri_write_bytes(path, text, strlen(text));
  ck_assert_msg(bri_ini_read(path, &ini, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(bri_ini_get(&ini, "default", "region"), "eu-west-1");
  ck_assert_str_eq(bri_ini_get(&ini, "profile dev", "s3.addressing_style"), "path");
  ck_assert_str_eq(bri_ini_get(&ini, "profile dev", "s3.endpoint_url"), "http://h:1");
  ck_assert_str_eq(bri_ini_get(&ini, "profile dev", "region"), "us-east-2");
  ck_assert_str_eq(bri_ini_get(&ini, "profile dev", "indented"), "after a value, not nested");
  ck_assert_ptr_null(bri_ini_get(&ini, "default", "s3.addressing_style"));
  bri_ini_clear(&ini);
  text = "[default]\nregion = x\njust words\n";
  bri_write_bytes(path, text, strlen(text));
  ck_assert_int_eq(bri_ini_read(path, &ini, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "config line 3: expected key = value"), "%s", err.msg);
  ck_assert_ptr_null(ini.entries);
  bri_rmtree(dir);
  free(dir);
  free(path);
}
END_TEST

/* bri_ini_parse's bri_ini_entry_fn for test_ini_conf: "section|key|value|line|section_line\n". */
static int print_entry(void *arg, const bri_ini_entry *e, bri_error *err) {
  (void)err;
  char line[512];
  snprintf(line, sizeof line, "%s|%s|%s|%d|%d\n", e->section, e->key, e->value, e->line, e->section_line);
  strcat(arg, line);
  return 0;
}

/* brid.conf's syntax (BRI_INI_CONF, inih's as brid always read it). */
START_TEST(test_ini_conf) {
  static char got[4096];
  bri_error err;
  int bad;
  const char *text = "\xEF\xBB\xBFtop = 1\n[daemon]\nroot = /a ; a comment\n   /b ; kept\n\n"
                     "workers: 2\nk = a;b\n  # a comment, not a value\n"
                     "[table /t/with]bracket.lance]\r\npaused = yes\n"
                     "[table /t/a-path-much-longer-than-the-forty-nine-bytes-inih-kept]\nx=\n"
                     "  [daemon]\n";
  got[0] = 0;
  ck_assert_msg(bri_ini_parse(text, strlen(text), BRI_INI_CONF, "f", print_entry, got, &bad, &err) == 0,
                "%s", err.msg);
  ck_assert_int_eq(bad, 0);
  ck_assert_str_eq(got, "|top|1|1|0\n"
                        "daemon|root|/a|3|2\n"
                        "daemon|root|/b ; kept|4|2\n"
                        "daemon|workers|2|6|2\n"
                        "daemon|k|a;b|7|2\n"
                        "table /t/with]bracket.lance|paused|yes|10|9\n"
                        "table /t/a-path-much-longer-than-the-forty-nine-bytes-inih-kept|x||12|11\n");
  text = "[daemon]\nroot = /a\njust words\nworkers = 2\n";
  got[0] = 0;
  ck_assert_int_eq(bri_ini_parse(text, strlen(text), BRI_INI_CONF, "f", print_entry, got, &bad, &err), BRI_EINVAL);
  ck_assert_int_eq(bad, 3);
  ck_assert_str_eq(err.msg, "f line 3: expected key = value");
  ck_assert_str_eq(got, "daemon|root|/a|2|1\n");
  text = "[daemon\n";
  ck_assert_int_eq(bri_ini_parse(text, strlen(text), BRI_INI_CONF, "f", print_entry, got, &bad, &err), BRI_EINVAL);
  ck_assert_int_eq(bad, 1);
}
END_TEST

static Suite *util_suite(void) {
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("util");
  tcase_add_test(tc, test_durations);
  tcase_add_test(tc, test_strset);
  tcase_add_test(tc, test_strbuf);
  tcase_add_test(tc, test_arena);
  tcase_add_test(tc, test_readahead);
  tcase_add_test(tc, test_path_join_and_strdupf);
  tcase_add_test(tc, test_error_wrap_truncates_safely);
  tcase_add_test(tc, test_arrow_validity);
  tcase_add_test(tc, test_ini);
  tcase_add_test(tc, test_ini_conf);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(util_suite)
