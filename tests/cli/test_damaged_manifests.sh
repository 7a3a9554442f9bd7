#!/usr/bin/env bash
# Every manifest of the damaged-manifest corpus, installed as the newest
# version of a copy of a real table, makes `brictl inspect` exit with status 2
# and a message that names the manifest file; the table is left unchanged.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
src=$BRI_SOURCE_DIR/tests/fixtures/tables/v21.lance
for f in "$BRI_SOURCE_DIR"/tests/corpus/manifests/*.manifest; do
  t=$TMP/$(basename "$f" .manifest).lance
  cp -a "$src" "$t"
  latest=$(ls "$t/_versions" | grep -c '\.manifest$')
  name=$(python3 -c "print('%020d.manifest' % (2**64 - 1 - ($latest + 1)))")
  cp "$f" "$t/_versions/$name"
  before=$(cd "$t" && find . -type f -exec sha256sum {} + | sort)
  set +e
  out=$("$BRICTL" inspect "$t" --json 2>&1 >/dev/null)
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "$(basename "$f"): exit $rc, expected 2 ($out)"
  grep -qF "$t/_versions/$name" <<<"$out" || fail "$(basename "$f"): message does not name the file: $out"
  after=$(cd "$t" && find . -type f -exec sha256sum {} + | sort)
  [ "$before" = "$after" ] || fail "$(basename "$f"): the table changed on disk"
  echo "ok $(basename "$f"): $out"
done
