#!/usr/bin/env bash
# CLUSTER with a local root shared by the three instances: see cluster.sh.
CLUSTER_ROOT=local exec bash "$(dirname "$0")/cluster.sh"
