#!/usr/bin/env bash
# BRID CRASH MATRIX on a PostgreSQL job store (the fast subset of
# test_daemon_crash_matrix.sh, each brid's store a database of the run's
# PostgreSQL): recovery after a crash does not wait for the lease, since
# the restarted brid sees the dead one's pid gone on this machine; a job
# whose end cannot be recorded is left to recovery, brid goes on.
BRI_TEST_STORE=pg exec bash "$(dirname "$0")/../reliability/brid_matrix.sh" --fast
