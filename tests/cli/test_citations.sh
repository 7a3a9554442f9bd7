#!/usr/bin/env bash
# scripts/check-citations.py: no file of the repository cites a document,
# a section of one, or a path the repository does not hold (DEPLOY: the
# format documents live in docs/format/), and the check names each bad
# citation it is shown (on a copy of docs/ with bad citations planted,
# beside good ones it must let pass).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CHECK=$BRI_SOURCE_DIR/scripts/check-citations.py
out=$(python3 "$CHECK" "$BRI_SOURCE_DIR" 2>&1) || fail "the repository cites what it does not hold: $out"

cp -r "$BRI_SOURCE_DIR/docs" "$TMP/"
mkdir -p "$TMP/lib" "$TMP/tests"
SH=..; SH=$SH/shared; WR=/wo; WR=${WR}rk
cat >"$TMP/lib/bad.c" <<C
/* bad.c: one bad citation a line (spec/table.md 2). See design.md.
 * From $SH/oracle/README.md, also $WR/shared/oracle/read_table.mjs.
 * docs/format/file.md 99.9; docs/format/file.md sections 3.1, 7.99 and 2.
 * docs/format/bri.md rule 12 and docs/format/bri.md 4 step 9.
 * A wrapped one (docs/format/table.md
 * section 15), and docs/format/nosuch.md. */
static const char *m = "refused (docs/format/bri.md "
                       "rule 10)";
C
cat >"$TMP/lib/good.c" <<C
/* good.c: citations that hold (docs/format/file.md 7.4, docs/format/file.md
 * sections 2-3 and 7.13, docs/format/bri.md rule 7, docs/format/bri.md rules 4-6,
 * docs/format/bri.md 4 step 3, docs/format/table.md
 * section 5.9), not citations: \$TMPD/work/x, \${T}/work/y, https://example.com/spec/x.md */
static const char *m = "refused (docs/format/bri.md "
                       "rule 9)";
C
printf '# t\n[a](../docs/format/table.md#5-protobuf-messages) [b](../docs/format/table.md#no-such-heading)\n' \
  >"$TMP/tests/links.md"
set +e; out=$(python3 "$CHECK" "$TMP" 2>&1); rc=$?; set -e
[ "$rc" -eq 1 ] || fail "check-citations exit $rc on planted citations: $out"
for needle in \
  'lib/bad.c:1: cites spec/table.md, which the repository does not hold' \
  'lib/bad.c:1: cites design.md, which the repository does not hold' \
  "lib/bad.c:2: cites $SH, outside the repository" \
  "lib/bad.c:2: cites an absolute path under $WR/, outside the repository" \
  "lib/bad.c:2: cites $SH/oracle/README.md, which the repository does not hold" \
  'lib/bad.c:3: docs/format/file.md has no section 99.9' \
  'lib/bad.c:3: docs/format/file.md has no section 7.99' \
  'lib/bad.c:4: docs/format/bri.md has no rule 12' \
  'lib/bad.c:4: docs/format/bri.md section 4 has no step 9' \
  'lib/bad.c:5: docs/format/table.md has no section 15' \
  'lib/bad.c:6: cites docs/format/nosuch.md, which the repository does not hold' \
  'lib/bad.c:7: docs/format/bri.md has no rule 10' \
  'tests/links.md:2: ../docs/format/table.md has no heading #no-such-heading' \
  'check-citations: 13 citation(s) of what the repository does not hold'; do
  grep -qF -- "$needle" <<<"$out" || fail "'$needle' not in: $out"
done
n=$(grep -c . <<<"$out")
[ "$n" -eq 14 ] || fail "expected 13 bad citations and a summary, got $n lines: $out"
echo ok
