#!/usr/bin/env bash
# BUSY, local root (inotify): a LanceDB writer committing several times a
# second for 60 s beside brid with its built-in defaults (tests/integration/
# busy.sh says what is checked). About 80 s; once per CI run.
BUSY_ROOT=local exec bash "$(dirname "$0")/busy.sh"
