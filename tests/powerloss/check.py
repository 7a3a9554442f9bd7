#!/usr/bin/env python3
"""check.py: checks every crash state replay.py built (tests/powerloss/,
docs/reliability.md "Power loss").

  check.py OUT WORKLOAD --table REL=REF[,REF...] [--table ...] [--optional REL]
           [--next STRATEGY] [--brid ROOT:TABLE_REL:STORE_REL:BASE:STRATEGY:SNAP_INODES]

For each state OUT/sNNNN and each table REL in it:
- `brictl verify --all-versions` passes (every file a retained version
  reaches is there, whole);
- `brictl scan` reads the rows and blob payloads of one of the REF reads
  (brictl scan --json of the table before and after each step of the
  workload: the old version or a new one, nothing in between);
- LanceDB (one node process for all states) reads the same, unless the
  latest version carries the BRI flag, which stock Lance refuses by design;
- with --next, the next compaction (brictl compact --strategy STRATEGY)
  succeeds and the table verifies after it;
- with --brid, brid started on the state recovers (check_brid.py), the
  state bind-mounted at the workload's root ROOT (unshare -m: each state in
  its own mount namespace).
A table named by --optional may be absent (a clone the crash came before);
then it must have no version at all. Prints one VIOLATION line per problem,
naming the state (states.tsv: crash point, variant, what was lost) and the
message (which names the missing or short file), then
`WORKLOAD: N crash states, M violations`; exits 1 when M > 0.
"""
import concurrent.futures as cf
import json
import os
import subprocess
import sys

IGNORE = {"table", "version", "fragments", "ms", "fragmentRows", "schemaFields", "descriptorKinds"}
BRICTL = os.environ.get("BRICTL", "brictl")
HERE = os.path.dirname(os.path.abspath(__file__))


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in IGNORE}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def canon(j):
    return json.dumps(strip(j), sort_keys=True)


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def first_problems(out):
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    bad = [l for l in lines if not l.endswith("ok") and "problems:" not in l and ": " in l]
    return " | ".join((bad or lines)[-3:])[:600]


def no_versions(t):
    v = os.path.join(t, "_versions")
    return not os.path.isdir(v) or not any(n.endswith(".manifest") for n in os.listdir(v))


def check_table(state, rel, allowed, optional, next_strategy):
    t = os.path.join(state, rel)
    probs = []
    if optional and no_versions(t):
        return probs, False
    rc, out = run(BRICTL, "verify", t, "--all-versions")
    if rc != 0:
        probs.append(f"{rel}: verify --all-versions fails: {first_problems(out)}")
        return probs, False
    rc, out = run(BRICTL, "scan", t, "--json")
    if rc != 0:
        probs.append(f"{rel}: brictl scan fails: {first_problems(out)}")
        return probs, False
    if canon(json.loads(out)) not in allowed:
        probs.append(f"{rel}: brictl reads rows or blob bytes of neither the old nor a new version")
    if next_strategy:
        rc, out = run(BRICTL, "compact", t, "--strategy", next_strategy)
        if rc != 0:
            probs.append(f"{rel}: the next compaction fails: {first_problems(out)}")
        else:
            rc, out = run(BRICTL, "verify", t, "--all-versions")
            if rc != 0:
                probs.append(f"{rel}: verify fails after the next compaction: {first_problems(out)}")
    return probs, True


def main():
    a = sys.argv[1:]
    if len(a) < 2:
        sys.exit(__doc__)
    out, workload = a[0], a[1]
    tables, optional, next_strategy, brid = {}, set(), None, None
    rest = a[2:]
    while rest:
        if rest[0] == "--table":
            rel, refs = rest[1].split("=", 1)
            tables[rel] = {canon(json.load(open(r))) for r in refs.split(",")}
        elif rest[0] == "--optional":
            optional.add(rest[1])
        elif rest[0] == "--next":
            next_strategy = rest[1]
        elif rest[0] == "--brid":
            brid = rest[1].split(":")
        else:
            sys.exit(f"check.py: unknown option {rest[0]}")
        rest = rest[2:]
    desc = {}
    with open(os.path.join(out, "states.tsv")) as f:
        for line in f:
            sid, rest_ = line.rstrip("\n").split("\t", 1)
            desc[sid] = rest_.replace("\t", "; ")
    states = sorted(desc)
    # the LanceDB reads are taken first (the next compaction changes the tables)
    lance_list = os.path.join(out, "lance.list")
    with open(lance_list, "w") as f:
        for s in states:
            for rel in tables:
                t = os.path.join(out, s, rel)
                if not (rel in optional and no_versions(t)):
                    f.write(t + "\n")
    p = subprocess.run(["node", os.path.join(HERE, "lance_states.mjs"), lance_list],
                       capture_output=True, text=True)
    lance = {}
    for line in p.stdout.splitlines():
        j = json.loads(line)
        lance[j["path"]] = j
    violations = []

    def one(s):
        probs = []
        for rel, allowed in tables.items():
            pr, present = check_table(os.path.join(out, s), rel, allowed, rel in optional, next_strategy)
            probs += pr
            t = os.path.join(out, s, rel)
            j = lance.get(t)
            if not present or pr:
                continue
            if j is None:
                probs.append(f"{rel}: LanceDB gave no answer ({p.stderr.strip()[-200:]})")
            elif not j["ok"]:
                if "cannot be read by this version of Lance" not in j["error"]:
                    probs.append(f"{rel}: LanceDB cannot open the table: {j['error'][:300]}")
            elif canon(j["read"]) not in allowed:
                probs.append(f"{rel}: LanceDB reads rows or blob bytes of neither the old nor a new version")
        if brid and not probs:
            root, trel, srel, base, strategy, inodes = brid
            r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                                'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh",
                                os.path.join(out, s), root, sys.executable, os.path.join(HERE, "check_brid.py"),
                                root, trel, srel, base, strategy, inodes], capture_output=True, text=True)
            probs += [f"brid: {l}" for l in r.stdout.splitlines() if l.strip()]
            if r.returncode != 0:
                probs.append(f"brid: the check did not run: {r.stderr.strip()[-300:]}")
        return s, probs

    with cf.ThreadPoolExecutor(max_workers=int(os.environ.get("PL_JOBS", "3"))) as ex:
        for s, probs in ex.map(one, states):
            for pr in probs:
                violations.append(pr)
                print(f"VIOLATION {workload} {s} ({desc[s]}): {pr}", flush=True)
    print(f"{workload}: {len(states)} crash states, {len(violations)} violations", flush=True)
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
