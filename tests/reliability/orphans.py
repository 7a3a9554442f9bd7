#!/usr/bin/python3
"""Lists the files of a Lance table that no version references ("orphans").

  orphans.py TABLE REFS [--versions V,V,...]

REFS is the output of tests/reliability/refs (what every manifest in
_versions/ references). A table that a cleanup with a zero grace period has
just been through must have none:
  data/            every file is a referenced data file, or lies in the own
                   sidecar directory of a referenced data file, or is a
                   sidecar a Blob Reuse Index names; every directory is such
                   a sidecar directory or holds a BRI-named sidecar
  _versions/       no staging file (.tmp*) is left
  _transactions/   every file is a referenced transaction file
  _deletions/      every file is a referenced deletion file
  _indices/        every directory is a referenced index directory
--versions also checks which versions are left (e.g. the latest and the
tagged ones). Symbolic links anywhere are reported too: Lance writes none.
Prints one line per problem; exit status 1 when there is any.
"""
import os
import stat
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    want_versions = None
    if len(argv) >= 5 and argv[3] == "--versions":
        want_versions = sorted(int(v) for v in argv[4].split(",") if v)
    refs = {k: set() for k in "VFDBXTI"}
    with open(argv[2]) as f:
        for line in f:
            kind, _, path = line.rstrip("\n").partition(" ")
            refs[kind].add(path if kind != "V" else int(path))
    bri_dirs = {os.path.dirname(p) for p in refs["B"]}
    problems = []

    def rel(p):
        return os.path.relpath(p, root)

    data = os.path.join(root, "data")
    if os.path.isdir(data) and not os.path.islink(data):
        for name in sorted(os.listdir(data)):
            p = os.path.join(data, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                problems.append(f"{rel(p)}: symbolic link")
            elif stat.S_ISDIR(st.st_mode):
                own = p in refs["D"]
                if not own and p not in bri_dirs:
                    problems.append(f"{rel(p)}/: sidecar directory of no referenced data file and no BRI source"
                                    f" ({len(os.listdir(p))} files)")
                    continue
                for f2 in sorted(os.listdir(p)):
                    q = os.path.join(p, f2)
                    if os.path.islink(q):
                        problems.append(f"{rel(q)}: symbolic link")
                    elif not own and q not in refs["B"]:
                        problems.append(f"{rel(q)}: in a BRI source directory but no retained BRI names it")
            elif p not in refs["F"]:
                problems.append(f"{rel(p)}: data file no version references")
    vdir = os.path.join(root, "_versions")
    for name in sorted(os.listdir(vdir)):
        if name.startswith(".tmp"):
            problems.append(f"_versions/{name}: staging file left behind")
    for sub, kind, what in (("_transactions", "T", "transaction file"), ("_deletions", "X", "deletion file")):
        d = os.path.join(root, sub)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if os.path.join(d, name) not in refs[kind]:
                    problems.append(f"{sub}/{name}: {what} no version references")
    d = os.path.join(root, "_indices")
    if os.path.isdir(d):
        for name in sorted(os.listdir(d)):
            if os.path.join(d, name) not in refs["I"]:
                problems.append(f"_indices/{name}: index directory no version references")
    if want_versions is not None and sorted(refs["V"]) != want_versions:
        problems.append(f"versions left {sorted(refs['V'])}, expected {want_versions}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
