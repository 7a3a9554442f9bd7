#!/usr/bin/env bash
# scripts/check-layers.sh: the repository keeps its layer order, and the check
# names each include that goes up a layer, up the module order inside
# lib/lance/table (the manifest codec below the table), or between programs
# (brid's job store is brid's alone), or past
# libbri's public headers, and inside daemon/brid each include that goes up
# its layers or sideways in one (on a copy with such includes planted).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CHECK=$BRI_SOURCE_DIR/scripts/check-layers.sh
out=$("$CHECK" "$BRI_SOURCE_DIR" 2>&1) || fail "the repository breaks its layer order: $out"

cp -r "$BRI_SOURCE_DIR/lib" "$BRI_SOURCE_DIR/daemon" "$BRI_SOURCE_DIR/include" "$TMP/"
echo '#include "compact/plan.h"' >>"$TMP/lib/lance/table/flags.h"
echo '#include "lance/file/writer.h"' >>"$TMP/lib/lance/encoding/page.h"
echo '#include "lance/table/table.h"' >>"$TMP/daemon/jobs/store.h"
echo '#include "jobs/store.h"' >>"$TMP/daemon/brictl/cmd_jobs.c"
echo '#include "brictl/cli.h"' >>"$TMP/daemon/brid/1_leaves/svc_log.h"
echo '#include "brid/1_leaves/svc_log.h"' >>"$TMP/daemon/rpc/rpc_proto.h"
echo '#include "ops/cleanup.h"' >>"$TMP/daemon/brictl/cli.h"
echo '#include "table.pb-c.h"' >>"$TMP/daemon/brid/6_iface/svc_api.h"
echo '#include "bri/nosuch.h"' >>"$TMP/daemon/brid/6_iface/svc_api.c"
echo '#include "brid/5_sched/svc_sched.h"' >>"$TMP/daemon/brid/3_exec/svc_worker.c"
echo '#include "svc_watch.h"' >>"$TMP/daemon/brid/4_sources/svc_poll.c"
echo '#include "brid/6_iface/svc_http.h"' >>"$TMP/daemon/brid/6_iface/svc_control.c"
echo '#include "brid/1_leaves/svc_log.h"' >"$TMP/daemon/brid/svc_stray.c"
echo '#include "bri/table.h"' >>"$TMP/lib/ops/verify.h"
echo '#include "lance/table/table.h"' >>"$TMP/lib/lance/table/manifest.c"
printf 'int64_t brid_now_ms(void) {\n  return 0;\n}\n' >>"$TMP/daemon/brid/brid.c"
set +e; out=$("$CHECK" "$TMP" 2>&1); rc=$?; set -e
[ "$rc" -eq 1 ] || fail "check-layers exit $rc on planted includes: $out"
for needle in \
  'lib/lance/table/flags.h: includes "compact/plan.h": lib/compact is above lib/lance/table' \
  'lib/lance/encoding/page.h: includes "lance/file/writer.h": lib/lance/file is above lib/lance/encoding' \
  'daemon/jobs/store.h: includes "lance/table/table.h": daemon/jobs reaches libbri only through include/bri' \
  'daemon/brictl/cmd_jobs.c: includes "jobs/store.h": daemon/brictl may not use daemon/jobs' \
  'daemon/brid/1_leaves/svc_log.h: includes "brictl/cli.h": daemon/brid may not use daemon/brictl' \
  'daemon/rpc/rpc_proto.h: includes "brid/1_leaves/svc_log.h": daemon/rpc may not use daemon/brid' \
  'daemon/brictl/cli.h: includes "ops/cleanup.h": daemon/brictl reaches libbri only through include/bri' \
  'daemon/brid/6_iface/svc_api.h: includes "table.pb-c.h": daemon/brid reaches libbri only through include/bri' \
  'daemon/brid/6_iface/svc_api.c: includes "bri/nosuch.h": no such public header: include/bri/nosuch.h' \
  'daemon/brid/3_exec/svc_worker.c: includes "brid/5_sched/svc_sched.h": brid/5_sched is above brid/3_exec' \
  'daemon/brid/4_sources/svc_poll.c: includes "svc_watch.h": brid/4_sources/watch is not below brid/4_sources/poll in the module order' \
  'daemon/brid/6_iface/svc_control.c: includes "brid/6_iface/svc_http.h": brid/6_iface/http is not below brid/6_iface/control in the module order' \
  'daemon/brid/svc_stray.c: includes "-": a brid module must live in a layer folder (BRID_LAYERS)' \
  'lib/ops/verify.h: includes "bri/table.h": include/bri is libbri'"'"'s public door, for programs' \
  'daemon/brid/brid.c: defines brid_now_ms(); only main lives in a program'"'"'s main file' \
  'lib/lance/table/manifest.c: includes "lance/table/table.h": lance/table/table is not below lance/table/manifest in the module order' \
  'check-layers: 16 include(s) or definition(s) break the layer order'; do
  grep -qF -- "$needle" <<<"$out" || fail "'$needle' not in: $out"
done
echo ok
