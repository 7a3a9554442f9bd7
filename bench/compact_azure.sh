#!/usr/bin/env bash
# bench/compact_azure.sh: bench/compact_s3.sh's comparison (LanceDB's
# optimize() against brictl compact --strategy bri and copy on identical
# tables; wall time, bytes through brid, bytes the service copied) on Azure
# Blob Storage: Azurite, scripts/azurite-server.sh, started when not running.
#   bench/compact_azure.sh [BLOB_BATCHES]
exec env BENCH_STORE=azure "$(dirname "$0")/compact_s3.sh" "$@"
