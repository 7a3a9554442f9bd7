#!/usr/bin/env bash
# BUSY, S3 root on the test radosgw (polls): a LanceDB writer committing
# several times a second for 60 s beside brid with its built-in defaults
# (tests/integration/busy.sh says what is checked). About 100 s; once per CI
# run.
BUSY_ROOT=s3 exec bash "$(dirname "$0")/busy.sh"
