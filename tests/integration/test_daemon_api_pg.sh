#!/usr/bin/env bash
# test_daemon_api.sh with brid's job store on PostgreSQL (BRI_TEST_STORE=pg:
# tests/integration/lib.sh gives each brid a database of the test server,
# scripts/pg-server.sh, instead of a SQLite file).
export BRI_TEST_STORE=pg
exec "$(dirname "$0")/test_daemon_api.sh" "$@"
