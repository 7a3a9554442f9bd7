/* instances.h: the brids that share one job store, and the leases their
 * jobs hold.
 *
 * An instance is one running brid, known by its name (instance_name in the
 * configuration, else "host:pid"). It registers when it starts, heartbeats
 * while it runs, and marks itself stopped when it exits cleanly; an instance
 * whose heartbeat is older than the lease is "lost" to the others. An
 * instance that died on this machine (same boot, same pid namespace: its
 * "locality") need not be waited for: registration sees its pid gone, marks
 * it stopped and ends its jobs' leases, so that recovery takes them at once
 * (a brid restarted by systemd after a crash resumes its work in a second,
 * not a lease later).
 *
 * A claim (queue.h) gives the job a lease on its table until now +
 * lease_ttl. The heartbeat renews the leases of the jobs the instance's
 * workers hold; a job whose lease has expired is recovered by any instance
 * (recover.h). Before an action it cannot take back (the table commit,
 * whose intent journal.h records, and each batch of deletes), a job confirms
 * that its lease holds with a third of lease_ttl to spare; otherwise it
 * gives up (BRI_ELEASE), because another instance may already have taken
 * the job over. */
#ifndef BRI_JOBS_INSTANCES_H
#define BRI_JOBS_INSTANCES_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/store.h"

typedef struct bri_jobs_instance_info {
  char *name, *session, *host, *version;
  int64_t pid;
  int64_t started_at, heartbeat_at;
  int64_t stopped_at; /* 0 while it runs (or was lost) */
} bri_jobs_instance_info;

/* Registers this store's instance (bri_jobs_instance) as started now on
 * host with pid and version, in locality (bri_jobs_locality). First every
 * instance of the same locality whose pid is gone is marked stopped and
 * its running jobs' leases ended (*dead, may be NULL, counts them). A name
 * that a live brid holds (not stopped, heartbeat within lease_ttl, another
 * session) is refused (BRI_EINVAL, err naming its host, pid and last
 * heartbeat): two brids must not share one name. */
int bri_jobs_instance_register(bri_jobs_store *s, const char *host, int64_t pid, const char *locality,
                               const char *version, size_t *dead, bri_error *err);
/* This process's locality: the boot id and the pid namespace, e.g.
 * "3f1c...:pid:[4026531836]" (out of cap bytes; "" when /proc says
 * nothing: no instance is then ever taken for dead). */
void bri_jobs_locality(char *out, size_t cap);
/* Marks this instance stopped (a clean exit). */
int bri_jobs_instance_stop(bri_jobs_store *s, bri_error *err);

/* One heartbeat: this instance's heartbeat_at = now, and the leases of the
 * n jobs job_ids (running under this session) renewed to now + lease_ttl,
 * in one transaction. renewed[i] (may be NULL) is 1 when job i's lease was
 * renewed, 0 when the job is no longer this session's (another instance
 * recovered it) or its lease has already run out (recovery, of any
 * instance, may be taking it over: an expired lease is never revived): its
 * worker must stop. *lease_until (may be NULL) is the new expiry. */
int bri_jobs_heartbeat(bri_jobs_store *s, const int64_t *job_ids, size_t n, int *renewed,
                       int64_t *lease_until, bri_error *err);

/* 0 when job_id runs under this session with a third of lease_ttl left;
 * BRI_ELEASE (err saying why) when it does not; what names the action
 * ("delete files of"). */
int bri_jobs_lease_confirm(bri_jobs_store *s, int64_t job_id, const char *what, bri_error *err);

/* Every registered instance, by name. */
int bri_jobs_instances(bri_jobs_store *s, bri_jobs_instance_info **out, size_t *n,
                       bri_error *err);
void bri_jobs_instances_free(bri_jobs_instance_info *v, size_t n);

#endif
