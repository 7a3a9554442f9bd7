#!/usr/bin/env bash
# CRASH MATRIX (fast subset, for make check): every libbri failpoint that
# brictl's offline commands pass through is armed once, with one action, while
# compact/cleanup/materialize run on a copy of a blob table with deletions
# and a tagged version; the table must read as before, verify, accept the
# rerun, and hold no orphan after cleanup --grace 0. The full matrix (every
# command, every action) is `make reliability`: tests/reliability/crash_matrix.sh.
set -euo pipefail
exec bash "$(dirname "$0")/../reliability/crash_matrix.sh" --fast
