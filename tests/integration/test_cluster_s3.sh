#!/usr/bin/env bash
# CLUSTER with an S3 root on the test radosgw: see cluster.sh.
CLUSTER_ROOT=s3 exec bash "$(dirname "$0")/cluster.sh"
