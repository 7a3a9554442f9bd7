#!/usr/bin/env bash
# TRIGGERS UNDER WRITES, local root (inotify): the count trigger and
# max_delay (tests/integration/writes.sh says what is checked). About 25 s.
WRITES_ROOT=local exec bash "$(dirname "$0")/writes.sh"
