/* fuzz_manifest.c: libFuzzer harness for the manifest parser. The input is a
 * whole manifest file; a parse that succeeds must also re-serialize, since
 * brid rewrites manifests it has read. */
#include <stdint.h>
#include <stdlib.h>

#include "lance/table/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bri_manifest *m;
  bri_error err;
  if (bri_manifest_parse(data, size, "fuzz.manifest", &m, &err) == 0) {
    uint8_t *out;
    size_t len;
    if (bri_manifest_serialize(m->pb, m->txn, m->indices, &out, &len, &err) == 0) free(out);
    bri_manifest_free(m);
  }
  return 0;
}
