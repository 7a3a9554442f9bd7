#!/usr/bin/env bash
# BRID CRASH MATRIX (fast subset, for make check): every failpoint a brid job
# passes is armed once in a real brid (the action rotating over abort, exit,
# stop + kill -9, eio and enospc) while it runs one job on a copy of a blob
# table with deletions and a tagged version; brid is restarted, recovery and
# the next jobs must run, the table must read as before, verify, and hold no
# orphan once the grace period is over. The full matrix (every command, every
# action) is `make reliability`: tests/reliability/brid_matrix.sh.
set -euo pipefail
exec bash "$(dirname "$0")/../reliability/brid_matrix.sh" --fast
