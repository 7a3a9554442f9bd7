/* migrate.c: the job store's one migration runner, shared by its drivers
 * (sqlite.c, pg.c; internal.h, jobs_migrate). A backend's schema file
 * (schema_sqlite.sql, schema_pg.sql, built in) is a series of scripts, each
 * from its "-- version N:" line to the next, script N taking the store from
 * version N - 1 to N. The runner finds the scripts and walks the versions;
 * how one script runs and how its version is recorded (in a transaction of
 * its own, or inside the one the driver holds) is the driver's step. */
#include "jobs/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The script of version v in schema, from its "-- version v:" line to the
 * next such line (malloc'd); NULL when there is none. */
static char *migration_script(const char *schema, int64_t v) {
  char mark[40];
  snprintf(mark, sizeof mark, "\n-- version %lld:", (long long)v);
  const char *a = strstr(schema, mark);
  if (!a) return NULL;
  a++;
  const char *b = strstr(a, "\n-- version ");
  return strndup(a, b ? (size_t)(b - a) : strlen(a));
}

int jobs_migrate(bri_jobs_store *s, const jobs_schema *schema, int64_t from,
                 jobs_migration_step run_step, bri_error *err) {
  char *extra = migration_script(schema->text, BRI_JOBS_SCHEMA_VERSION + 1);
  free(extra);
  if (extra)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: internal: %s goes beyond version %d (BRI_JOBS_SCHEMA_VERSION)",
                         s->path, schema->file, BRI_JOBS_SCHEMA_VERSION);
  int rc = 0;
  for (int64_t v = from ? from + 1 : schema->first; !rc && v <= BRI_JOBS_SCHEMA_VERSION; v++) {
    char step[64];
    snprintf(step, sizeof step, "migrating the schema to version %lld", (long long)v);
    char *script = migration_script(schema->text, v);
    if (!script)
      return bri_error_set(err, BRI_EINVAL, "%s: %s: internal: %s has no such version", s->path,
                           step, schema->file);
    rc = run_step(s, script, v, step, err);
    free(script);
  }
  return rc;
}
