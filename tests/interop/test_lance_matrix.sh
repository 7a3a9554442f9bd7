#!/usr/bin/env bash
# CURRENT (issue 34): brid against the Lance versions in use today, as a matrix
# writer x table kind x operation x reader (tests/interop/lance_matrix.py):
#  - writers and readers: Lance 12 (LanceDB 0.39 from npm), Lance 13 (LanceDB
#    0.40's native core) and Lance 14 (pylance 14.0.3), the last two from the
#    venv scripts/deps.sh makes in .deps/py;
#  - kinds: plain Blob v2 (inline, packed, dedicated, empty and null values),
#    deletions, stable row ids, indexed (IVF_PQ + BTREE + FTS built part-way),
#    and from Lance 14 Managed blobs, a table Lance switched to Managed itself,
#    and a 2.3 table;
#  - operations: brictl compact auto/link/copy/bri, bri + materialize, compact
#    + cleanup, clone --shallow/--deep, and pylance 14's compact_files and
#    cleanup_old_versions (LanceDB 0.40's optimize) on brid's output;
#  - every reader that reads the source reads the result with the same rows,
#    column hashes and query answers; brictl verify passes; the refusals are
#    asserted with their messages (bri by every stock Lance by flag 1<<40,
#    Managed by Lance 12 and 13 by flag 16384, 2.3 files by brid naming 2.3);
#  - the canonical hash: lance_py.py's readers give exactly lance_read.mjs's
#    hashes on LanceDB 0.39 tables of every type lance_make.mjs writes.
# One line per cell; exits 1 if any cell failed. MATRIX_ONLY=REGEX runs only
# the cells whose name (writer/kind/op/reader) it matches, e.g.
#   MATRIX_ONLY=lance14/indexed bash tests/interop/test_lance_matrix.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle
need_lance_py
"$LANCE_PY" "$INTEROP_DIR/lance_matrix.py" "$TMPD/matrix" || fail "cells failed (listed above)"
pass
