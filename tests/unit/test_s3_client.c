/* test_s3_client.c: the S3 client against a real radosgw (started by
 * scripts/s3-server.sh; scripts/run-tests.sh exports its AWS_* variables and
 * BRI_S3_BUCKET), and through tests/s3/fault_proxy.py for faults: dropped
 * connections, lost answers, delays past the idle timeout, 500/503 SlowDown,
 * a 200 carrying an <Error>, bodies cut short. No mocks: every byte goes
 * through radosgw. Each test works under its own key prefix and removes it. */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "storage/aws_config.h"
#include "storage/s3_client.h"
#include "testutil.h"

extern char **environ;

/* Where every call of these tests counts its requests (storage/backend.h):
 * the counters of a store, here of none. */
static bri_store_counts tally;

/* What was counted since the last reset. */
static bri_store_stats counted(void) {
  bri_store_stats s;
  bri_store_counts_get(&tally, &s);
  return s;
}

static const char *bucket(void) {
  const char *b = getenv("BRI_S3_BUCKET");
  ck_assert_msg(b && getenv("AWS_ENDPOINT_URL"),
                "no S3 server: run through scripts/run-tests.sh (it starts radosgw with "
                "scripts/s3-server.sh and exports AWS_ENDPOINT_URL and BRI_S3_BUCKET)");
  return b;
}

/* A client from the environment, optionally aimed at another endpoint. */
static bri_obj_client *client_at(const char *endpoint, const bri_obj_options *opt) {
  bri_aws_settings s = {0};
  s.endpoint = endpoint;
  bri_aws_config cfg;
  bri_error err;
  bucket();
  ck_assert_msg(bri_aws_config_load(&s, &cfg, &err) == 0, "%s", err.msg);
  bri_obj_client *c;
  ck_assert_msg(bri_s3_client_new(&cfg, opt, &c, &err) == 0, "%s", err.msg);
  bri_aws_config_clear(&cfg);
  return c;
}

static char prefix[64];
static void new_prefix(void) {
  static int n;
  snprintf(prefix, sizeof prefix, "unit-%d-%ld-%d/", (int)getpid(), (long)time(NULL), n++);
}

static char *key(const char *name) {
  char *k = malloc(strlen(prefix) + strlen(name) + 1);
  strcpy(k, prefix);
  strcat(k, name);
  return k;
}

static void put(bri_obj_client *c, const char *name, const char *text) {
  char *k = key(name);
  bri_error err;
  ck_assert_msg(bri_obj_put(c, &tally, bucket(), k, text, strlen(text), 0, &err) == 0, "%s", err.msg);
  free(k);
}

/* The object at key k holds exactly n bytes equal to want. */
static void expect_object(bri_obj_client *c, const char *k, const void *want, size_t n) {
  uint8_t *data;
  size_t len;
  bri_error err;
  ck_assert_msg(bri_obj_get(c, &tally, bucket(), k, &data, &len, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(len, n);
  ck_assert(!memcmp(data, want, n));
  free(data);
}

/* Deletes everything under this test's prefix. */
static void remove_prefix(bri_obj_client *c) {
  bri_obj_list_args a = {.prefix = prefix};
  bri_obj_listing l;
  bri_error err;
  ck_assert_msg(bri_obj_list_all(c, &tally, bucket(), &a, &l, &err) == 0, "%s", err.msg);
  const char **keys = calloc(l.n_objects + 1, sizeof *keys);
  for (size_t i = 0; i < l.n_objects; i++) keys[i] = l.objects[i].key;
  size_t deleted;
  ck_assert_msg(bri_obj_delete(c, &tally, bucket(), keys, l.n_objects, NULL, &deleted, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(deleted, l.n_objects);
  free(keys);
  bri_obj_listing_clear(&l);
}

START_TEST(test_put_get_head_ranges) {
  bri_obj_client *c = client_at(NULL, NULL);
  new_prefix();
  bri_error err;
  const char *text = "0123456789abcdefghij";
  put(c, "a b+c=é.txt", text); /* a key that needs encoding, signed and sent alike */
  char *k = key("a b+c=é.txt");
  uint8_t *data;
  size_t len;
  ck_assert_msg(bri_obj_get(c, &tally, bucket(), k, &data, &len, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(len, 20);
  ck_assert(!memcmp(data, text, 20));
  free(data);
  bri_obj_info o;
  ck_assert_msg(bri_obj_head(c, &tally, bucket(), k, &o, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(o.size, 20);
  ck_assert(o.etag[0] == '"');
  ck_assert(o.mtime > time(NULL) - 3600 && o.mtime < time(NULL) + 3600);
  bri_obj_info_clear(&o);

  char buf[32];
  size_t got;
  uint64_t size;
  ck_assert_msg(bri_obj_get_range(c, &tally, bucket(), k, 5, 4, buf, &got, &size, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(got, 4);
  ck_assert_uint_eq(size, 20);
  ck_assert(!memcmp(buf, "5678", 4));
  /* a range past the end comes back short, as far as the object goes */
  ck_assert_msg(bri_obj_get_range(c, &tally, bucket(), k, 15, 10, buf, &got, &size, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(got, 5);
  ck_assert(!memcmp(buf, "fghij", 5));
  ck_assert_msg(bri_obj_get_range(c, &tally, bucket(), k, 20, 10, buf, &got, &size, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(got, 0);
  ck_assert_uint_eq(size, 20);
  /* suffix ranges: the last n bytes, or all of a smaller object */
  ck_assert_msg(bri_obj_get_suffix(c, &tally, bucket(), k, 3, &data, &len, &size, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(len, 3);
  ck_assert_uint_eq(size, 20);
  ck_assert(!memcmp(data, "hij", 3));
  free(data);
  ck_assert_msg(bri_obj_get_suffix(c, &tally, bucket(), k, 64, &data, &len, &size, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(len, 20);
  ck_assert(!memcmp(data, text, 20));
  free(data);
  /* a batch of ranged GETs, all in flight together */
  bri_obj_batch *b = bri_obj_batch_new(c, &tally);
  char parts[5][4];
  for (int i = 0; i < 5; i++) {
    ck_assert(bri_obj_batch_get_range(b, bucket(), k, (uint64_t)i * 4, 4, parts[i], &err) == 0);
  }
  ck_assert_msg(bri_obj_batch_run(b, &err) == 0, "%s", err.msg);
  ck_assert(!memcmp(parts, text, 20));
  bri_obj_batch_free(b);
  free(k);

  /* missing objects: ENOTFOUND, the message names bucket, key, status, code */
  k = key("missing");
  ck_assert_int_eq(bri_obj_get(c, &tally, bucket(), k, &data, &len, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "get s3://bucket/unit-") && strstr(err.msg, "/missing: HTTP 404 NoSuchKey"),
                "%s", err.msg);
  ck_assert_int_eq(bri_obj_head(c, &tally, bucket(), k, &o, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "head s3://bucket/unit-") && strstr(err.msg, "HTTP 404"), "%s", err.msg);
  free(k);
  remove_prefix(c);
  bri_obj_client_free(c);
}
END_TEST

START_TEST(test_put_if_absent) {
  bri_obj_client *c = client_at(NULL, NULL);
  new_prefix();
  bri_error err;
  char *k = key("_versions/18446744073709551614.manifest");
  ck_assert_msg(bri_obj_put(c, &tally, bucket(), k, "first", 5, BRI_OBJ_PUT_IF_ABSENT, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_obj_put(c, &tally, bucket(), k, "second", 6, BRI_OBJ_PUT_IF_ABSENT, &err), BRI_ETAKEN);
  ck_assert_msg(strstr(err.msg, "taken") && strstr(err.msg, "18446744073709551614.manifest"), "%s", err.msg);
  uint8_t *data;
  size_t len;
  ck_assert(bri_obj_get(c, &tally, bucket(), k, &data, &len, &err) == 0);
  ck_assert_uint_eq(len, 5);
  ck_assert(!memcmp(data, "first", 5)); /* never overwritten */
  free(data);
  free(k);
  remove_prefix(c);
  bri_obj_client_free(c);
}
END_TEST

START_TEST(test_list_and_delete) {
  bri_obj_client *c = client_at(NULL, NULL);
  new_prefix();
  bri_error err;
  /* 1003 objects: DeleteObjects goes in two requests (1000 + 3) */
  enum { N = 1003 };
  char **names = calloc(N, sizeof *names);
  bri_obj_batch *b = bri_obj_batch_new(c, &tally);
  for (int i = 0; i < N; i++) {
    char n[64];
    snprintf(n, sizeof n, "%s/f%04d", i < 3 ? "dir a" : (i < 6 ? "dir+b" : "flat"), i);
    names[i] = key(n);
    const char *body = names[i] + strlen(prefix); /* stays valid until the batch ran */
    ck_assert(bri_obj_batch_put(b, bucket(), names[i], body, strlen(body), &err) == 0);
  }
  ck_assert_msg(bri_obj_batch_run(b, &err) == 0, "%s", err.msg);
  bri_obj_batch_free(b);

  /* delimiter: the three "directories" */
  bri_obj_list_args a = {.prefix = prefix, .delimiter = "/"};
  bri_obj_listing l;
  ck_assert_msg(bri_obj_list_all(c, &tally, bucket(), &a, &l, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(l.n_objects, 0);
  ck_assert_uint_eq(l.n_prefixes, 3);
  char want[128];
  snprintf(want, sizeof want, "%sdir a/", prefix);
  ck_assert_str_eq(l.prefixes[0], want);
  snprintf(want, sizeof want, "%sdir+b/", prefix);
  ck_assert_str_eq(l.prefixes[1], want);
  bri_obj_listing_clear(&l);

  /* pages of 2 with continuation tokens, and start-after */
  snprintf(want, sizeof want, "%sdir a/", prefix);
  bri_obj_list_args p = {.prefix = want, .max_keys = 2};
  ck_assert_msg(bri_obj_list_page(c, &tally, bucket(), &p, &l, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(l.n_objects, 2);
  ck_assert(l.truncated && l.next_token);
  ck_assert_uint_eq(l.objects[0].size, strlen("dir a/f0000"));
  ck_assert(l.objects[0].mtime > 0);
  p.continuation_token = l.next_token;
  bri_obj_listing l2;
  ck_assert_msg(bri_obj_list_page(c, &tally, bucket(), &p, &l2, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(l2.n_objects, 1);
  ck_assert(!l2.truncated);
  ck_assert_str_eq(l2.objects[0].key, names[2]);
  bri_obj_listing_clear(&l2);
  bri_obj_listing_clear(&l);
  bri_obj_list_args sa = {.prefix = want, .start_after = names[0]};
  ck_assert(bri_obj_list_all(c, &tally, bucket(), &sa, &l, &err) == 0);
  ck_assert_uint_eq(l.n_objects, 2);
  ck_assert_str_eq(l.objects[0].key, names[1]);
  bri_obj_listing_clear(&l);
  /* max-keys=1 finds the first key in order (how brid finds the latest version) */
  bri_obj_list_args one = {.prefix = prefix, .max_keys = 1};
  ck_assert(bri_obj_list_page(c, &tally, bucket(), &one, &l, &err) == 0);
  ck_assert_uint_eq(l.n_objects, 1);
  ck_assert_str_eq(l.objects[0].key, names[0]);
  bri_obj_listing_clear(&l);

  size_t deleted;
  int *rcs = malloc(N * sizeof *rcs);
  ck_assert_msg(bri_obj_delete(c, &tally, bucket(), (const char *const *)names, N, rcs, &deleted, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(deleted, N);
  for (int i = 0; i < N; i++) ck_assert_int_eq(rcs[i], 0);
  free(rcs);
  bri_obj_list_args all = {.prefix = prefix};
  ck_assert(bri_obj_list_all(c, &tally, bucket(), &all, &l, &err) == 0);
  ck_assert_uint_eq(l.n_objects, 0);
  bri_obj_listing_clear(&l);
  for (int i = 0; i < N; i++) free(names[i]);
  free(names);
  bri_obj_client_free(c);
}
END_TEST

/* The object made by server-side copies: CopyObject of a whole object,
 * UploadPartCopy of ranges of it, an uploaded part, completed. */
START_TEST(test_copy_and_multipart) {
  bri_obj_client *c = client_at(NULL, NULL);
  new_prefix();
  bri_error err;
  size_t n = BRI_S3_PART_MIN + 1000;
  uint8_t *src = bri_pattern(n, 1), *tail = bri_pattern(777, 2);
  char *ks = key("src.blob"), *kc = key("copy.blob"), *km = key("multi.blob");
  ck_assert(bri_obj_put(c, &tally, bucket(), ks, src, n, 0, &err) == 0);
  bri_store_stats before = counted(), after;
  ck_assert_msg(bri_obj_copy(c, &tally, bucket(), ks, bucket(), kc, n, &err) == 0, "%s", err.msg);

  char *upload;
  ck_assert_msg(bri_obj_mpu_create(c, &tally, bucket(), km, &upload, &err) == 0, "%s", err.msg);
  bri_obj_part parts[3];
  bri_obj_batch *b = bri_obj_batch_new(c, &tally);
  /* part 1: bytes [1000, n) of src; part 2: [0, PART_MIN); part 3: uploaded */
  size_t m = BRI_S3_PART_MIN;
  ck_assert(bri_obj_batch_copy_part(b, bucket(), km, upload, 1, bucket(), ks, 1000, n - 1000, &parts[0], &err) == 0);
  ck_assert(bri_obj_batch_copy_part(b, bucket(), km, upload, 2, bucket(), ks, 0, m, &parts[1], &err) == 0);
  ck_assert(bri_obj_batch_put_part(b, bucket(), km, upload, 3, tail, 777, &parts[2], &err) == 0);
  ck_assert_msg(bri_obj_batch_run(b, &err) == 0, "%s", err.msg);
  bri_obj_batch_free(b);
  ck_assert_msg(bri_obj_mpu_complete(c, &tally, bucket(), km, upload, parts, 3, &err) == 0, "%s", err.msg);
  free(upload);
  after = counted();
  ck_assert_uint_eq(after.bytes_copied_server - before.bytes_copied_server, n + (n - 1000) + m);
  ck_assert_uint_lt(after.bytes_written - before.bytes_written, 4000); /* the copies moved no payload */
  ck_assert_uint_lt(after.bytes_read - before.bytes_read, 8000);
  ck_assert_uint_eq(after.by_kind[BRI_REQ_COPY][BRI_REQ_2XX] - before.by_kind[BRI_REQ_COPY][BRI_REQ_2XX], 1);
  ck_assert_uint_eq(after.by_kind[BRI_REQ_MPU_COPY][BRI_REQ_2XX] - before.by_kind[BRI_REQ_MPU_COPY][BRI_REQ_2XX], 2);

  expect_object(c, kc, src, n);
  uint8_t *data;
  size_t len;
  ck_assert(bri_obj_get(c, &tally, bucket(), km, &data, &len, &err) == 0);
  ck_assert_uint_eq(len, n - 1000 + m + 777);
  ck_assert(!memcmp(data, src + 1000, n - 1000));
  ck_assert(!memcmp(data + n - 1000, src, m));
  ck_assert(!memcmp(data + n - 1000 + m, tail, 777));
  free(data);

  /* an aborted upload leaves nothing; aborting twice is fine */
  char *ka = key("aborted.blob");
  ck_assert(bri_obj_mpu_create(c, &tally, bucket(), ka, &upload, &err) == 0);
  ck_assert(bri_obj_mpu_abort(c, &tally, bucket(), ka, upload, &err) == 0);
  ck_assert_msg(bri_obj_mpu_abort(c, &tally, bucket(), ka, upload, &err) == 0, "%s", err.msg);
  bri_obj_info o;
  ck_assert_int_eq(bri_obj_head(c, &tally, bucket(), ka, &o, &err), BRI_ENOTFOUND);
  free(upload);
  /* copying a missing source names it */
  ck_assert_int_eq(bri_obj_copy(c, &tally, bucket(), ka, bucket(), kc, 0, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "aborted.blob") && strstr(err.msg, "source is missing"), "%s", err.msg);
  free(ka);
  free(ks);
  free(kc);
  free(km);
  free(src);
  free(tail);
  remove_prefix(c);
  bri_obj_client_free(c);
}
END_TEST

START_TEST(test_virtual_hosted_and_bad_secret) {
  bucket();
  bri_error err;
  /* virtual-hosted: http://bucket.localhost:PORT (radosgw's DNS name is localhost) */
  const char *ep = getenv("AWS_ENDPOINT_URL");
  const char *port = strrchr(ep, ':');
  char vh[128];
  snprintf(vh, sizeof vh, "http://localhost%s", port);
  bri_aws_settings s = {.endpoint = vh, .addressing = BRI_S3_ADDRESSING_VIRTUAL};
  bri_aws_config cfg;
  ck_assert(bri_aws_config_load(&s, &cfg, &err) == 0);
  ck_assert(cfg.virtual_hosted);
  bri_obj_client *c;
  ck_assert(bri_s3_client_new(&cfg, NULL, &c, &err) == 0);
  bri_aws_config_clear(&cfg);
  new_prefix();
  char *k = key("vh.txt");
  ck_assert_msg(bri_obj_put(c, &tally, bucket(), k, "virtual", 7, 0, &err) == 0, "%s", err.msg);
  bri_obj_list_args a = {.prefix = prefix};
  bri_obj_listing l;
  ck_assert_msg(bri_obj_list_all(c, &tally, bucket(), &a, &l, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(l.n_objects, 1);
  ck_assert_str_eq(l.objects[0].key, k);
  bri_obj_listing_clear(&l);
  remove_prefix(c);
  bri_obj_client_free(c);
  free(k);

  /* a wrong secret is refused (403), named, and not retried */
  bri_aws_settings bad = {.access_key_id = getenv("AWS_ACCESS_KEY_ID"), .secret_access_key = "wrong"};
  ck_assert(bri_aws_config_load(&bad, &cfg, &err) == 0);
  ck_assert(bri_s3_client_new(&cfg, NULL, &c, &err) == 0);
  bri_aws_config_clear(&cfg);
  memset(&tally, 0, sizeof tally);
  ck_assert_int_eq(bri_obj_put(c, &tally, bucket(), "x", "x", 1, 0, &err), BRI_EIO);
  ck_assert_msg(strstr(err.msg, "put s3://bucket/x: HTTP 403 SignatureDoesNotMatch"), "%s", err.msg);
  bri_store_stats st = counted();
  ck_assert_uint_eq(st.retries, 0);
  ck_assert_uint_eq(st.requests, 1);
  ck_assert_uint_eq(st.by_kind[BRI_REQ_PUT][BRI_REQ_4XX], 1);
  bri_obj_client_free(c);
}
END_TEST

/* max_rate spaces request starts across the client: 10 requests at 20 per
 * second take at least 9 intervals of 50 ms. */
START_TEST(test_rate_limit) {
  bri_obj_options slow = {.max_rate = 20};
  bri_obj_client *c = client_at(NULL, &slow);
  new_prefix();
  bri_error err;
  put(c, "r", "0123456789");
  char *k = key("r");
  char out[10];
  bri_obj_batch *b = bri_obj_batch_new(c, &tally);
  for (int i = 0; i < 10; i++) ck_assert(bri_obj_batch_get_range(b, bucket(), k, (uint64_t)i, 1, out + i, &err) == 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ck_assert_msg(bri_obj_batch_run(b, &err) == 0, "%s", err.msg);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ck_assert(!memcmp(out, "0123456789", 10));
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  ck_assert_msg(ms >= 440, "10 requests at 20/s took %.0f ms", ms);
  bri_obj_batch_free(b);
  free(k);
  remove_prefix(c);
  bri_obj_client_free(c);
}
END_TEST

/* ---- faults, through tests/s3/fault_proxy.py ---- */

typedef struct proxy {
  pid_t pid;
  int in; /* its stdin: closing it stops it */
  char url[64];
} proxy;

static void proxy_start(proxy *p) {
  const char *src = getenv("BRI_SOURCE_DIR");
  const char *ep = getenv("AWS_ENDPOINT_URL");
  ck_assert_msg(src, "BRI_SOURCE_DIR is not set");
  bucket();
  char script[512];
  snprintf(script, sizeof script, "%s/tests/s3/fault_proxy.py", src);
  int to[2], from[2];
  ck_assert(pipe(to) == 0 && pipe(from) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from[1], 1);
  posix_spawn_file_actions_addclose(&fa, to[1]);
  posix_spawn_file_actions_addclose(&fa, from[0]);
  char *argv[] = {"python3", script, (char *)strstr(ep, "://") + 3, NULL};
  ck_assert(posix_spawnp(&p->pid, "python3", &fa, NULL, argv, environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  close(to[0]);
  close(from[1]);
  p->in = to[1];
  FILE *f = fdopen(from[0], "r");
  int port = 0;
  ck_assert_msg(fscanf(f, "port %d", &port) == 1, "fault_proxy.py did not start");
  fclose(f);
  snprintf(p->url, sizeof p->url, "http://127.0.0.1:%d", port);
}

static void proxy_stop(proxy *p) {
  close(p->in);
  kill(p->pid, SIGTERM);
  waitpid(p->pid, NULL, 0);
}

static size_t sink(char *d, size_t s, size_t n, void *ud) {
  strncat(ud, d, s * n < 4000 ? s * n : 4000);
  return s * n;
}

/* Sets the proxy's rules (JSON); returns its answer (hits per rule). */
static void proxy_rules(const proxy *p, const char *json, char out[4096]) {
  CURL *e = curl_easy_init();
  char url[128];
  snprintf(url, sizeof url, "%s/__fault__", p->url);
  out[0] = '\0';
  curl_easy_setopt(e, CURLOPT_URL, url);
  if (json) {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, json);
  }
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, out);
  ck_assert(curl_easy_perform(e) == CURLE_OK);
  curl_easy_cleanup(e);
}

static const bri_obj_options fast = {.connect_timeout_ms = 2000, .idle_timeout_ms = 1000,
                                    .max_attempts = 5, .backoff_base_ms = 20,
                                    .backoff_max_ms = 200};

/* A proxy, a client through it with fast retries, a fresh key prefix. */
static bri_obj_client *through_proxy(proxy *p) {
  proxy_start(p);
  memset(&tally, 0, sizeof tally);
  bri_obj_client *c = client_at(p->url, &fast);
  new_prefix();
  return c;
}

START_TEST(test_faults_retried) {
  proxy p;
  bri_obj_client *c = through_proxy(&p);
  bri_error err;
  char rules[1024], hits[4096];
  size_t n = 100000;
  uint8_t *payload = bri_pattern(n, 3);
  char *k = key("data.lance");
  /* a dropped connection on the PUT; on the GET, a 503 SlowDown twice, a body cut
   * short and a delay past the idle timeout; a 500 on the list */
  snprintf(rules, sizeof rules,
           "[{\"match\":\"PUT /bucket/%s\",\"action\":\"drop\",\"times\":1},"
           "{\"match\":\"GET /bucket/%s\",\"action\":\"status:503\",\"times\":2},"
           "{\"match\":\"GET /bucket/%s\",\"action\":\"truncate\",\"times\":1},"
           "{\"match\":\"GET /bucket/%s\",\"action\":\"delay:2500\",\"times\":1},"
           "{\"match\":\"list-type=2\",\"action\":\"status:500\",\"times\":1}]",
           k, k, k, k);
  proxy_rules(&p, rules, hits);
  ck_assert_msg(bri_obj_put(c, &tally, bucket(), k, payload, n, 0, &err) == 0, "%s", err.msg);
  expect_object(c, k, payload, n);
  uint8_t buf[1000];
  size_t got;
  ck_assert_msg(bri_obj_get_range(c, &tally, bucket(), k, 5000, 1000, buf, &got, NULL, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(got, 1000);
  ck_assert(!memcmp(buf, payload + 5000, 1000));
  bri_obj_list_args a = {.prefix = prefix};
  bri_obj_listing l;
  ck_assert_msg(bri_obj_list_all(c, &tally, bucket(), &a, &l, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(l.n_objects, 1);
  bri_obj_listing_clear(&l);
  proxy_rules(&p, NULL, hits);
  ck_assert_msg(strstr(hits, "\"0\": 1") && strstr(hits, "\"1\": 2") && strstr(hits, "\"2\": 1") &&
                    strstr(hits, "\"3\": 1") && strstr(hits, "\"4\": 1"),
                "every fault fired once: %s", hits);
  bri_store_stats st = counted();
  ck_assert_uint_eq(st.retries, 6);
  ck_assert_uint_eq(st.by_kind[BRI_REQ_GET][BRI_REQ_5XX], 2);
  ck_assert_uint_eq(st.by_kind[BRI_REQ_LIST][BRI_REQ_5XX], 1);
  ck_assert_uint_ge(st.by_kind[BRI_REQ_PUT][BRI_REQ_NO_ANSWER], 1);
  free(k);
  free(payload);
  remove_prefix(c);
  bri_obj_client_free(c);
  proxy_stop(&p);
}
END_TEST

/* Requests whose answer is lost after the server acted: a PUT-if-absent
 * (the retry meets 412 and finds its own bytes), a CompleteMultipartUpload
 * (the retry meets NoSuchUpload and finds the object with the parts' ETag),
 * a DeleteObjects; and an UploadPartCopy answered 200 with an <Error>. */
START_TEST(test_lost_answers_settled) {
  proxy p;
  bri_obj_client *c = through_proxy(&p);
  bri_error err;
  char rules[1024], hits[4096];
  char *km = key("_versions/18446744073709551613.manifest"), *ks = key("src"), *kd = key("dst");
  size_t n = BRI_S3_PART_MIN;
  uint8_t *src = bri_pattern(n, 4);
  ck_assert(bri_obj_put(c, &tally, bucket(), ks, src, n, 0, &err) == 0);
  snprintf(rules, sizeof rules,
           "[{\"match\":\"PUT /bucket/%s\",\"action\":\"lose\",\"times\":1},"
           "{\"match\":\"POST /bucket/%s?uploadId\",\"action\":\"lose\",\"times\":1},"
           "{\"match\":\"PUT /bucket/%s?partNumber\",\"action\":\"error200:InternalError\",\"times\":1},"
           "{\"match\":\"POST /bucket?delete\",\"action\":\"lose\",\"times\":1}]",
           km, kd, kd);
  proxy_rules(&p, rules, hits);
  ck_assert_msg(bri_obj_put(c, &tally, bucket(), km, "manifest", 8, BRI_OBJ_PUT_IF_ABSENT, &err) == 0, "%s", err.msg);
  /* someone else's object under the name: still taken after a lost answer */
  proxy_rules(&p, rules, hits);
  ck_assert_int_eq(bri_obj_put(c, &tally, bucket(), km, "other", 5, BRI_OBJ_PUT_IF_ABSENT, &err), BRI_ETAKEN);

  char *upload;
  ck_assert(bri_obj_mpu_create(c, &tally, bucket(), kd, &upload, &err) == 0);
  bri_obj_part part;
  bri_obj_batch *b = bri_obj_batch_new(c, &tally);
  ck_assert(bri_obj_batch_copy_part(b, bucket(), kd, upload, 1, bucket(), ks, 0, n, &part, &err) == 0);
  ck_assert_msg(bri_obj_batch_run(b, &err) == 0, "%s", err.msg);
  bri_obj_batch_free(b);
  ck_assert_msg(bri_obj_mpu_complete(c, &tally, bucket(), kd, upload, &part, 1, &err) == 0, "%s", err.msg);
  free(upload);
  expect_object(c, kd, src, n);
  proxy_rules(&p, NULL, hits);
  ck_assert_msg(strstr(hits, "\"0\": 1") && strstr(hits, "\"1\": 1") && strstr(hits, "\"2\": 1"),
                "faults fired: %s", hits);
  remove_prefix(c); /* its DeleteObjects answer is lost once: the retry settles it */
  proxy_rules(&p, NULL, hits);
  ck_assert_msg(strstr(hits, "\"3\": 1"), "delete fault fired: %s", hits);
  free(km);
  free(ks);
  free(kd);
  free(src);
  bri_obj_client_free(c);
  proxy_stop(&p);
}
END_TEST

/* max_active caps the requests in flight on the whole client, every thread
 * together: two threads with 3 GETs each, each GET held 300 ms by the
 * proxy, 2 at a time: at least three rounds. */
typedef struct getter {
  bri_obj_client *c;
  const char *key;
  int rc;
  char out[3];
} getter;

static void *get_three(void *arg) {
  getter *g = arg;
  bri_error err;
  bri_obj_batch *b = bri_obj_batch_new(g->c, NULL);
  for (int i = 0; i < 3; i++) bri_obj_batch_get_range(b, bucket(), g->key, (uint64_t)i, 1, g->out + i, &err);
  g->rc = bri_obj_batch_run(b, &err);
  bri_obj_batch_free(b);
  return NULL;
}

START_TEST(test_max_active) {
  proxy p;
  proxy_start(&p);
  bri_obj_options capped = fast;
  capped.idle_timeout_ms = 5000;
  capped.max_active = 2;
  bri_obj_client *c = client_at(p.url, &capped);
  new_prefix();
  put(c, "k", "abc");
  char *k = key("k"), rules[512], hits[4096];
  snprintf(rules, sizeof rules, "[{\"match\":\"GET /bucket/%s\",\"action\":\"delay:300\"}]", k);
  proxy_rules(&p, rules, hits);
  getter g[2] = {{c, k, -1, {0}}, {c, k, -1, {0}}};
  pthread_t th[2];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < 2; i++) ck_assert(pthread_create(&th[i], NULL, get_three, &g[i]) == 0);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(g[i].rc, 0);
    ck_assert(!memcmp(g[i].out, "abc", 3));
  }
  ck_assert_msg(ms >= 850, "6 GETs of 300 ms, 2 at a time, took %.0f ms", ms);
  proxy_rules(&p, "[]", hits);
  remove_prefix(c);
  free(k);
  bri_obj_client_free(c);
  proxy_stop(&p);
}
END_TEST

/* Listings in a batch: each page its own outcome (one of them a 500 every
 * time), the others unharmed. */
START_TEST(test_batch_list) {
  proxy p;
  bri_obj_client *c = through_proxy(&p);
  bri_error err, why[3];
  put(c, "a/_versions/1", "x");
  put(c, "a/_versions/2", "x");
  put(c, "b/_versions/9", "x");
  char pre[3][128], rules[512], hits[4096];
  const char *dirs[3] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++) snprintf(pre[i], sizeof pre[i], "%s%s/_versions/", prefix, dirs[i]);
  snprintf(rules, sizeof rules, "[{\"match\":\"%s\",\"action\":\"status:500\"}]", "c%2F_versions");
  proxy_rules(&p, rules, hits);
  bri_obj_listing l[3];
  int rc[3];
  bri_obj_batch *b = bri_obj_batch_new(c, &tally);
  for (int i = 0; i < 3; i++) {
    bri_obj_list_args a = {.prefix = pre[i], .delimiter = "/", .max_keys = 1};
    ck_assert(bri_obj_batch_list(b, bucket(), &a, &l[i], &rc[i], &why[i], &err) == 0);
  }
  bri_obj_batch_run(b, &err);
  bri_obj_batch_free(b);
  ck_assert_int_eq(rc[0], 0);
  ck_assert_uint_eq(l[0].n_objects, 1);
  ck_assert_msg(strstr(l[0].objects[0].key, "a/_versions/1"), "%s", l[0].objects[0].key);
  ck_assert(l[0].truncated);
  ck_assert_int_eq(rc[1], 0);
  ck_assert_uint_eq(l[1].n_objects, 1);
  ck_assert_int_eq(rc[2], BRI_EIO);
  ck_assert_msg(strstr(why[2].msg, "list s3://bucket/") && strstr(why[2].msg, "HTTP 500"), "%s", why[2].msg);
  for (int i = 0; i < 3; i++) bri_obj_listing_clear(&l[i]);
  ck_assert_uint_eq(counted().by_kind[BRI_REQ_LIST][BRI_REQ_5XX], 5); /* fast: 5 attempts */
  proxy_rules(&p, "[]", hits);
  remove_prefix(c);
  bri_obj_client_free(c);
  proxy_stop(&p);
}
END_TEST

START_TEST(test_persistent_failure_named) {
  proxy p;
  proxy_start(&p);
  bri_obj_client *c = client_at(p.url, &fast);
  memset(&tally, 0, sizeof tally);
  bri_error err;
  char hits[4096];
  proxy_rules(&p, "[{\"match\":\"GET /bucket/t.lance/\",\"action\":\"status:503\"}]", hits);
  uint8_t *data;
  size_t len;
  ck_assert_int_eq(bri_obj_get(c, &tally, bucket(), "t.lance/x", &data, &len, &err), BRI_EIO);
  ck_assert_msg(strstr(err.msg, "get s3://bucket/t.lance/x: HTTP 503 SlowDown: injected by fault_proxy "
                                "(after 5 attempts)"),
                "%s", err.msg);
  ck_assert_uint_eq(counted().retries, 4);
  ck_assert_uint_eq(counted().by_kind[BRI_REQ_GET][BRI_REQ_5XX], 5);
  /* a server that is gone: connection refused, named, retried, then given up */
  proxy_stop(&p);
  ck_assert_int_eq(bri_obj_get(c, &tally, bucket(), "t.lance/x", &data, &len, &err), BRI_EIO);
  ck_assert_msg(strstr(err.msg, "get s3://bucket/t.lance/x: ") && strstr(err.msg, "after 5 attempts"),
                "%s", err.msg);
  bri_obj_client_free(c);
}
END_TEST

static Suite *s3_client_suite(void) {
  Suite *s = suite_create("s3_client");
  TCase *tc = tcase_create("s3_client");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_put_get_head_ranges);
  tcase_add_test(tc, test_put_if_absent);
  tcase_add_test(tc, test_list_and_delete);
  tcase_add_test(tc, test_copy_and_multipart);
  tcase_add_test(tc, test_virtual_hosted_and_bad_secret);
  tcase_add_test(tc, test_rate_limit);
  tcase_add_test(tc, test_faults_retried);
  tcase_add_test(tc, test_lost_answers_settled);
  tcase_add_test(tc, test_persistent_failure_named);
  tcase_add_test(tc, test_max_active);
  tcase_add_test(tc, test_batch_list);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(s3_client_suite)
