#!/usr/bin/env bash
# FORWARD: tables as a newer Lance might leave them. Each case rewrites the
# latest manifest of a copy of a LanceDB-written table (tests/corpus/
# forward_manifest.py: unknown varint and length-delimited fields in the
# Manifest, a DataFragment, a DataFile, a DeletionFile, an IndexMetadata; an
# unknown varint holding a section's offset; unknown, paired and half-set
# feature flags; Lance 14's fragment tree; a data file with a second global
# buffer or with column metadata brid does not know).
# brictl compact, cleanup, clone and materialize then carry, drop or refuse
# as docs/format/fields.md says: a refusal exits 2 with a message naming a
# file of the table and the field or flag, and leaves every file as it was
# (sha256 of the tree, brictl's own .brid.lock aside); a carry exits 0 and
# the field is still in the new version, except a Manifest's unknown field,
# which a new manifest file drops; and LanceDB 0.39 reads the same rows
# from the output as from the input whenever it could read the input.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

FIX=$REPO/tests/fixtures/tables
FM=$REPO/tests/corpus/forward_manifest.py
tree_hash() { (cd "$1" && find . -type f ! -name .brid.lock -exec sha256sum {} + | sort); }
# what LanceDB reads (rows, schema, per-column hashes), or "unreadable"
content() {
  lance_read "$1" --json --no-blob-bytes 2>/dev/null |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);
      console.log(JSON.stringify([j.rows,j.schema,j.columns]))})' 2>/dev/null || echo unreadable
}

# the plain fixture's BTree index holds its fragments back (docs/indexes.md):
# the cases start from a copy whose index LanceDB replaced by a BITMAP one, which
# compaction carries, so that every compaction has work
PLAIN=$TMPD/plain-base.lance
cp -a "$FIX/plain.lance" "$PLAIN"
lance_ops "$PLAIN" drop-index id_idx >/dev/null && lance_ops "$PLAIN" bitmap-index cat >/dev/null ||
  fail "LanceDB could not replace the fixture's index"
# the materialize cases start from a BRI table (LanceDB refuses it by flag)
BRI=$TMPD/bri-base.lance
cp -a "$FIX/blobs.lance" "$BRI"
"$BRICTL" compact "$BRI" --offline --strategy bri >/dev/null || fail "compacting the BRI base failed"
want_blobs=$(content "$FIX/blobs.lance")

n_ok=0
# check OP CASE carry|refuse [WORDS]: WORDS must appear in a refusal's message
check() {
  local op=$1 case=$2 want=$3 words=${4:-}
  local src=$PLAIN t=$TMPD/$op-$case.lance dst=$TMPD/$op-$case-clone.lance
  [ "$op" = materialize ] && src=$BRI
  cp -a "$src" "$t"
  python3 "$FM" "$t" "$case" >/dev/null || fail "$case: forward_manifest.py failed"
  local before readable after out rc
  before=$(tree_hash "$t")
  readable=$(content "$t")
  set +e
  case $op in
  compact) out=$("$BRICTL" compact "$t" --offline 2>&1) ;;
  cleanup) out=$("$BRICTL" cleanup "$t" --offline --older-than 0 --grace 0 2>&1) ;;
  clone) out=$("$BRICTL" clone "$t" "$dst" --deep 2>&1) ;;
  materialize) out=$("$BRICTL" materialize "$t" --offline 2>&1) ;;
  esac
  rc=$?
  set -e
  after=$(tree_hash "$t")
  if [ "$want" = refuse ]; then
    [ $rc -eq 2 ] || fail "$op $case: exit $rc, expected 2 (refused): $out"
    grep -qF "$t/" <<<"$out" || fail "$op $case: the message names no file of the table: $out"
    [ -z "$words" ] || grep -qF -- "$words" <<<"$out" || fail "$op $case: message lacks '$words': $out"
    [ "$before" = "$after" ] || fail "$op $case: refused, but files changed on disk"
    [ ! -e "$dst" ] || fail "$op $case: refused, but $dst exists"
  else
    [ $rc -eq 0 ] || fail "$op $case: exit $rc, expected 0 (carried): $out"
    local out_t=$t
    [ "$op" = clone ] && out_t=$dst
    if [ "$op" != cleanup ]; then
      local expect=0 has
      [ "$case" = datafile-hint8 ] && [ "$op" = compact ] && expect=1 # dropped with its file
      case $case in manifest-*|pointer) expect=1 ;; esac            # a new manifest file drops them
      set +e
      python3 "$FM" --has "$out_t" "$case"
      has=$?
      set -e
      [ $has -eq 2 ] || [ $has -eq $expect ] ||
        fail "$op $case: the field was $([ $expect = 0 ] && echo dropped || echo kept)"
    fi
    if [ "$op" = materialize ]; then
      [ "$(content "$t")" = "$want_blobs" ] || fail "$op $case: LanceDB does not read the original rows"
    elif [ "$readable" != unreadable ]; then
      [ "$(content "$out_t")" = "$readable" ] || fail "$op $case: LanceDB reads other rows than before"
    fi
  fi
  n_ok=$((n_ok + 1))
  echo "ok $op $case: $want${out:+ ($(head -c 160 <<<"$out" | tr '\n' ' '))}"
}

# unknown fields, per message (docs/format/compatibility.md, the carry/refuse table)
for c in manifest-varint manifest-ld pointer index-varint index-ld datafile-hint8 flag-mixed-both \
  flag-managed-both; do
  check compact $c carry
done
# column metadata brid does not know: that column is re-encoded, not page copied
# (tests/unit/test_datafile.c checks which), and LanceDB reads the same rows
check compact no-deletions carry
check compact column-foreign carry
check compact fragment-varint refuse "DataFragment field 99 (varint)"
check compact fragment-ld refuse "DataFragment field 98 (length-delimited)"
check compact datafile-varint refuse "DataFile field 99 (varint)"
check compact datafile-ld refuse "DataFile field 98 (length-delimited)"
check compact deletion-varint refuse "DeletionFile field 99 (varint)"
check compact extra-global-buffer refuse "2 global buffers"

for c in manifest-varint fragment-varint datafile-varint datafile-hint8 deletion-varint index-varint \
  pointer flag-mixed-both flag-managed-both extra-global-buffer; do
  check cleanup $c carry
done
check cleanup manifest-ld refuse "Manifest field 98 (length-delimited)"
check cleanup fragment-ld refuse "DataFragment field 98"
check cleanup datafile-ld refuse "DataFile field 98"
check cleanup index-ld refuse "IndexMetadata field 98"

for c in manifest-varint pointer fragment-varint datafile-varint datafile-hint8 deletion-varint \
  index-varint flag-mixed-both flag-managed-both extra-global-buffer; do
  check clone $c carry
done
check clone manifest-ld refuse "Manifest field 98"
check clone fragment-ld refuse "DataFragment field 98"
check clone datafile-ld refuse "DataFile field 98"
check clone index-ld refuse "IndexMetadata field 98"

for c in manifest-varint manifest-ld pointer fragment-varint fragment-ld datafile-varint datafile-ld \
  flag-mixed-both; do
  check materialize $c carry
done

# flags and tree-shaped manifests: every operation refuses
for op in compact cleanup clone materialize; do
  check $op flag-mixed-reader-only refuse "(mixed_data_file_versions) is set in the reader word only"
  check $op flag-managed-writer-only refuse "(managed_blobs) is set in the writer word only"
  check $op flag-fragment-tree refuse "feature flag 4096 (fragment_tree) is not supported"
  check $op tree refuse "(fragment_tree) is not supported"
  check $op tree-unflagged refuse "Manifest field 22 (fragment_tree) is set"
done

# inspect describes what it cannot act on, and says so
t=$TMPD/inspect-tree.lance
cp -a "$FIX/plain.lance" "$t"
python3 "$FM" "$t" tree >/dev/null
"$BRICTL" inspect "$t" --json >"$TMPD/tree.json" || fail "inspect refused a fragment-tree table"
node - "$TMPD/tree.json" <<'JS' || fail "inspect's compatibility report is wrong for a tree table"
const c = JSON.parse(require("fs").readFileSync(process.argv[2])).compatibility;
const bad = ["compact", "materialize", "clone", "cleanup", "verify"].filter((k) => c[k].ok || !/fragment_tree/.test(c[k].reason));
if (!c.features.includes("fragment_tree") || bad.length) { console.error(JSON.stringify(c)); process.exit(1); }
JS
# (into a file first: grep -q closing the pipe would fail brictl's next write under pipefail)
"$BRICTL" inspect "$FIX/plain.lance" >"$TMPD/inspect.txt"
grep -q "^  compact     yes" "$TMPD/inspect.txt" || fail "inspect text: plain table not compactable"
# the fragment reuse index a compaction leaves, with a field brid does not know
t=$TMPD/inspect-fri.lance
cp -a "$PLAIN" "$t"
"$BRICTL" compact "$t" --offline >/dev/null
python3 "$FM" "$t" fri-varint >/dev/null
"$BRICTL" inspect "$t" >"$TMPD/inspect.txt"
grep -q "^  compact     no: .*IndexMetadata field 99 (varint)" "$TMPD/inspect.txt" ||
  fail "inspect: a fragment reuse index with an unknown field is not reported as blocking compaction"
echo "$n_ok cases"
pass
