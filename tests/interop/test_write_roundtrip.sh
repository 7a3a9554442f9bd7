#!/usr/bin/env bash
# WRITE interop: brid's data file writer produces files that LanceDB 0.39.0
# (Lance 12.0.0) reads back with the same values.
#
# For tables LanceDB writes during this run (storage 2.2: plain, blobs,
# encodings, types, nested, largelist, extras, blobnest, edge; storage 2.1:
# plain, encodings, types, nested, largelist, extras, edge; edge comes from
# write_roundtrip_edge.mjs), every data file is rewritten
# by build/tests/test_writer_rewrite (BRI_REWRITE_TABLES / BRI_REWRITE_MODE)
# in three ways and committed as a Rewrite version:
#   leaf   decode every page, re-encode it with brid's page encoder;
#   copy   verbatim page copy wherever allowed, Blob v2 columns re-encoded;
#   arrow  read each fragment as Arrow through brid's reader and write one new
#          file per fragment (new fragment ids, deleted rows dropped); once with
#          the default 8 MiB page target and once with 32 KiB (many pages per
#          column, pages cut inside batches).
# LanceDB must then read every column of the new version with the hashes of
# the original (lance_read.mjs --json: rows, schema and per-column SHA-256,
# including Blob v2 payload bytes).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

BRI_BUILD=${BRI_BUILD:-$REPO/build}
DRIVER=$BRI_BUILD/tests/test_writer_rewrite
[ -x "$DRIVER" ] || fail "$DRIVER is missing (make $DRIVER)"

make_tables "$TMPD/v22" --tables plain,blobs,encodings,types,nested,largelist,extras,blobnest \
  --small >/dev/null || fail "lance_make (2.2) failed"
make_tables "$TMPD/v21" --tables plain,encodings,types,nested,largelist,extras --small \
  --storage-version 2.1 >/dev/null || fail "lance_make (2.1) failed"
# shapes the generator's tables do not reach (all-null lists, FullZip fixed width, ...)
for v in 2.1 2.2; do
  node "$INTEROP_DIR/write_roundtrip_edge.mjs" "$TMPD/v${v/./}" "$v" >/dev/null ||
    fail "write_roundtrip_edge.mjs ($v) failed"
done

mkdir -p "$TMPD/work"
checked=0
for t in "$TMPD"/v22/*.lance "$TMPD"/v21/*.lance; do
  ver=$(basename "$(dirname "$t")")
  name=$(basename "$t" .lance)
  orig=$TMPD/work/$ver.$name.orig.json
  lance_read "$t" --json >"$orig" || fail "lance_read $ver/$name failed"
  for mode in leaf copy arrow arrow-small; do
    tag=$mode pages=
    if [ "$mode" = arrow-small ]; then mode=arrow pages=32768; fi
    w=$TMPD/work/$ver.$name.$tag.lance
    cp -a "$t" "$w"
    log=$TMPD/work/$ver.$name.$tag.log
    if ! BRI_SOURCE_DIR=$REPO BRI_REWRITE_TABLES=$w BRI_REWRITE_MODE=$mode BRI_REWRITE_STATS=1 \
        BRI_REWRITE_PAGE_BYTES=$pages \
        CK_RUN_TEST=test_rewrite_env_tables CK_DEFAULT_TIMEOUT=600 "$DRIVER" >"$log" 2>&1; then
      cat "$log" >&2
      fail "brid could not rewrite $ver/$name ($tag)"
    fi
    grep '^rewrite ' "$log" || true
    new=$TMPD/work/$ver.$name.$tag.json
    lance_read "$w" --json >"$new" || fail "LanceDB cannot read $ver/$name after the $tag rewrite"
    ignore=table,version,ms
    # the arrow rewrite gives the fragments new ids
    [ "$mode" = arrow ] && ignore=$ignore,fragmentRows
    json_eq "$orig" "$new" --ignore "$ignore" ||
      fail "LanceDB reads different values from $ver/$name after the $tag rewrite"
    checked=$((checked + 1))
  done
done
echo "$checked rewrites read back identically by LanceDB"
pass
