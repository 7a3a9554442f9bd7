#!/usr/bin/env bash
# scripts/check-storage.sh: no code in lib/ outside lib/storage and lib/util
# opens, reads, lists or deletes a file itself, and the check names each call
# that does (on a copy with such calls planted; a marked line, a comment, a
# string and a member call named like a system call are not calls); and no
# file of one object-store dialect names another store (planted both ways;
# the shared files may name both).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CHECK=$BRI_SOURCE_DIR/scripts/check-storage.sh
out=$("$CHECK" "$BRI_SOURCE_DIR" 2>&1) || fail "lib/ bypasses the storage interface: $out"

cp -r "$BRI_SOURCE_DIR/lib" "$TMP/"
cat >>"$TMP/lib/ops/cleanup.c" <<'C'
static void planted(const char *p, struct bri_store_ops *ops) {
  unlink(p);
  int fd = open(p, 0); /* storage: not a table file */
  char *x = bri_strdupf("open(%s)", p); /* open( in a string */
  ops->read(fd); /* a member, not read(2) */
  DIR *d = opendir(p);
  (void)bri_read_file(p, 1, 0, 0, 0);
}
C
echo '  x = fopen("f", "r");' >>"$TMP/lib/lance/table/table.c"
echo '  (void)lstat(p, &st); /* lstat( in a comment is fine, the call is not */' >>"$TMP/lib/compact/execute.c"
echo '  unlink(p);' >>"$TMP/lib/storage/local.c"   # the storage layer may
echo '  unlink(p);' >>"$TMP/lib/util/fsutil.c"     # and so may util
echo '/* as Azure does */' >>"$TMP/lib/storage/s3_client.c"
echo '  h = "x-amz-date";' >>"$TMP/lib/storage/azure_client.c"
echo '/* S3 and Azure alike */' >>"$TMP/lib/storage/object_client.c"   # shared: may name both
set +e; out=$("$CHECK" "$TMP" 2>&1); rc=$?; set -e
[ "$rc" -eq 1 ] || fail "check-storage exit $rc on planted calls: $out"
n=$(wc -l <"$TMP/lib/ops/cleanup.c")
for needle in \
  "lib/ops/cleanup.c:$((n - 6)): calls unlink()" \
  "lib/ops/cleanup.c:$((n - 2)): calls opendir()" \
  "lib/ops/cleanup.c:$((n - 1)): calls bri_read_file()" \
  "lib/lance/table/table.c:$(wc -l <"$TMP/lib/lance/table/table.c"): calls fopen()" \
  "lib/compact/execute.c:$(wc -l <"$TMP/lib/compact/execute.c"): calls lstat()" \
  'check-storage: 5 call(s) bypass the storage interface' \
  "lib/storage/s3_client.c:$(wc -l <"$TMP/lib/storage/s3_client.c"): names azure" \
  "lib/storage/azure_client.c:$(wc -l <"$TMP/lib/storage/azure_client.c"): names s3" \
  "check-storage: 2 line(s) of a dialect's files name another store"; do
  grep -qF -- "$needle" <<<"$out" || fail "'$needle' not in: $out"
done
echo ok
