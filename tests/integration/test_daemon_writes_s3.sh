#!/usr/bin/env bash
# TRIGGERS UNDER WRITES, S3 root on the test radosgw (polls): the count
# trigger and max_delay (tests/integration/writes.sh says what is checked).
# About 30 s.
WRITES_ROOT=s3 exec bash "$(dirname "$0")/writes.sh"
