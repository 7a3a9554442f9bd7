#!/usr/bin/env bash
# SOAK (60 s, for make check): two LanceDB writers append and delete in a loop
# on two tables while brictl compacts (link strategy) and cleans (cleanup
# --older-than 0) both over and over; at the end each table holds exactly
# the rows its writer committed, brictl and LanceDB read the same, verify
# passes and nothing is orphaned. `make reliability` runs it for 10 minutes:
# tests/reliability/soak.sh.
set -euo pipefail
exec bash "$(dirname "$0")/../reliability/soak.sh" "${SOAK_SECONDS:-60}"
