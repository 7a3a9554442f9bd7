"""check_brid.py: the power-loss checker's part for brid's own workload
(tests/powerloss/check.py --brid; docs/reliability.md "Power loss").

  check_brid.py ROOT TABLE_REL STORE_REL BASE_VERSION STRATEGY SNAP_INODES

ROOT is the crash state, seen at the workload's own path (the job store
names tables by absolute path: check.py bind-mounts the state there in a
private mount namespace, so that states are checked side by side). Prints
one problem a line.

brid is started on the state's job store (SQLite) and table root, as it
would be after the machine came back, and must:
- start (its store opens, its recovery runs);
- never forget a job that committed: when the state's table holds a version
  newer than the workload's base, a compaction job is in the store and ends
  succeeded; and never record a commit the table lost (a job succeeded with
  a version newer than the table's latest);
- settle every job it finds (none left queued or running) and leave no
  journal, and reclaim what a lost attempt wrote: no file the workload made
  (one not in the snapshot, SNAP_INODES) is left that no version references
  (cleanup --dry-run --older-than 0 lists it; what it lists of the old
  versions was in the snapshot; staging files .tmp* and the transaction
  file of a commit that did not land excepted: brid's journal does not
  name them, and cleanup reclaims them after its grace period, as Lance's
  own leftovers; docs/reliability.md);
- run the next compaction of the table (brictl compact --wait) to success.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

BRICTL = os.environ.get("BRICTL", "brictl")
BRID = os.environ.get("BRID", "brid")


def _ctl(sock, *args, timeout=60):
    p = subprocess.run([BRICTL, *args, "--socket", sock], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def _latest(table):
    p = subprocess.run([BRICTL, "inspect", table, "--json"], capture_output=True, text=True)
    return json.loads(p.stdout)["version"] if p.returncode == 0 else None


def _tail(path, n=3):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(l.strip() for l in f.read().splitlines()[-n:])
    except OSError:
        return ""


def _left_behind(table, root, snap_inodes):
    """Files the workload made that no version references."""
    before = set()
    with open(snap_inodes) as f:
        for line in f:
            before.add(line.rstrip("\n").split("\t", 1)[1])
    p = subprocess.run([BRICTL, "cleanup", table, "--dry-run", "--older-than", "0", "--grace", "0",
                        "--offline", "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return [f"cleanup --dry-run fails: {p.stderr.strip()[-200:]}"]
    left = []
    for e in json.loads(p.stdout).get("deleted", []):
        path = e.get("path", "")
        rel = os.path.relpath(path, root)
        if rel not in before and e.get("kind") not in ("staging", "transaction") and \
                not os.path.basename(path).startswith(".tmp"):
            left.append(rel)
    return left


def check(state, table_rel, store_rel, base_version, strategy, snap_inodes):
    """Problems (strings) found running brid on state."""
    table = os.path.join(state, table_rel)
    root = os.path.dirname(table)
    work = tempfile.mkdtemp(prefix="plbrid.")
    sock, log, conf = (os.path.join(work, n) for n in ("s.sock", "brid.log", "brid.conf"))
    with open(conf, "w") as f:
        f.write(f"[daemon]\nroot = {root}\nretry_base = 1s\nmax_attempts = 3\n"
                "[defaults]\nauto_compact = no\ncleanup_interval = 0\n")
    latest0 = _latest(table)
    probs = []
    with open(log, "w") as lf:
        brid = subprocess.Popen([BRID, "--config", conf, "--socket", sock, "--state",
                                 os.path.join(state, store_rel)], stderr=lf, stdout=lf)
    try:
        end = time.time() + 30
        while "ready:" not in open(log, errors="replace").read():
            if brid.poll() is not None or time.time() > end:
                return [f"brid does not start on the state's job store: {_tail(log)}"]
            time.sleep(0.05)
        # a job recorded as succeeded names a version the table has
        rc, out, err = _ctl(sock, "jobs", "--json")
        for j in json.loads(out)["jobs"] if rc == 0 else []:
            v = (j.get("result") or {}).get("version")
            if j["kind"] == "compact" and j["state"] == "succeeded" and v and latest0 is not None and v > latest0:
                probs.append(f"job {j['id']} is recorded as succeeded with version {v}, but the table's "
                             f"latest version is {latest0} (_versions/ lost the commit)")
        # recovery settles what it finds: no job left queued or running
        end = time.time() + 60
        while True:
            rc, out, err = _ctl(sock, "jobs", "--json")
            if rc != 0:
                return [f"brictl jobs fails: {err.strip()[:200]}"]
            jobs = json.loads(out)["jobs"]
            if not any(j["state"] in ("queued", "running") for j in jobs) or time.time() > end:
                break
            time.sleep(0.1)
        busy = [j for j in jobs if j["state"] in ("queued", "running")]
        if busy:
            probs.append(f"brid left {len(busy)} job(s) queued or running after its recovery")
        compactions = [j for j in jobs if j.get("kind") == "compact"]
        if latest0 is not None and latest0 > base_version:
            if not compactions:
                probs.append(f"the table holds version {latest0} (the job's commit) but the job store has "
                             f"forgotten the job: {json.dumps(jobs)[:200]}")
            elif not any(j["state"] == "succeeded" for j in compactions):
                probs.append(f"the job's commit (version {latest0}) is durable but the job ended "
                             f"{compactions[0]['state']}")
        for j in jobs:
            rc, out, err = _ctl(sock, "job", str(j["id"]), "--json")
            if rc == 0 and json.loads(out).get("journal"):
                probs.append(f"job {j['id']} keeps a journal after recovery: {json.loads(out)['journal']}")
        left = _left_behind(table, state, snap_inodes)
        if left:
            probs.append(f"recovery left {len(left)} file(s) a lost attempt wrote that no version "
                         f"references: {', '.join(left[:3])}")
        rc, out, err = _ctl(sock, "compact", table, "--strategy", strategy, "--wait", timeout=120)
        if rc != 0:
            probs.append(f"the next compaction through brid fails: {(err or out).strip()[-300:]}")
        brid.send_signal(signal.SIGTERM)
        try:
            if brid.wait(30) != 0:
                probs.append(f"brid did not stop cleanly (status {brid.returncode}): {_tail(log)}")
        except subprocess.TimeoutExpired:
            probs.append("brid did not stop within 30 s of SIGTERM")
    finally:
        if brid.poll() is None:
            brid.kill()
            brid.wait()
        for n in os.listdir(work):
            os.unlink(os.path.join(work, n))
        os.rmdir(work)
    return probs


if __name__ == "__main__":
    for pr in check(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]):
        print(pr)
