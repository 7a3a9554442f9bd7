#!/usr/bin/env python3
"""replay.py: builds the states a power loss permits from a plshim.c recording
(tests/powerloss/, docs/reliability.md "Power loss").

  replay.py snapshot ROOT SNAP          copy ROOT to SNAP (cp -a: hard links kept)
                                        and write SNAP.inodes (inode -> path)
  replay.py states LOG ROOT SNAP OUT [--max N] [--seed S]
                                        write each distinct crash state as a tree
                                        OUT/sNNNN (a fresh copy of SNAP with the
                                        chosen operations applied) and one line
                                        per state in OUT/states.tsv

The persistence model (per-directory, as POSIX promises and no more):
- a write or truncation of a file is durable once that file was fsynced (or
  fdatasynced) after it; before that it may be kept, lost, or (a write) cut at
  a 4 KiB boundary of the file;
- a directory entry (create, link, rename, unlink, mkdir, rmdir) is durable
  once its directory was fsynced after it (a rename: the target's directory;
  its two halves go together, as one journal transaction on ext4 and XFS);
  fsyncing a file does not make its name durable, nor does fsyncing a
  directory make its own entry in its parent durable.
ext4 (data=ordered) and XFS keep more than this (a journal commit carries
every earlier metadata change with it), so every state they can produce after
a crash is one of these; the states here that they cannot produce (a later
entry kept while an earlier one in another directory is lost) are what a
filesystem with per-directory logging (btrfs' log tree) or one that keeps
only what POSIX promises may show.

Sampling, per crash point (just before each fsync and each directory
operation, and after the last operation):
  none       every operation not yet durable is lost
  all        every one is kept (what kill -9 leaves)
  prefix:K   the pending directory operations before the K-th are kept, the
             rest lost (journal order), pending data kept
  drop:K     only the K-th pending directory operation is lost
  lose:F     the pending writes of file F are lost, everything else kept
  torn:F     the last pending write of file F is cut at a 4 KiB boundary
States that come out byte-identical (the same tree) are checked once.
"""
import hashlib
import os
import random
import shutil
import stat
import subprocess
import sys

META = {"create", "link", "unlink", "mkdir", "rmdir", "rename"}
DATA = {"write", "trunc"}
BLOCK = 4096


class Op:
    __slots__ = ("i", "pid", "op", "kind", "ino", "path", "a")

    def __init__(self, i, fields):
        self.i = i
        self.pid, self.op, self.kind = fields[0], fields[1], fields[2]
        self.ino = int(fields[3])
        self.path = fields[4]
        self.a = fields[5:]

    def dirs(self):
        """The inodes of the directories whose fsync makes this entry durable."""
        if self.op == "rename":
            return int(self.a[2])
        if self.op == "link":
            return int(self.a[1])
        return int(self.a[0])

    def short(self, root):
        rel = lambda p: os.path.relpath(p, root)
        if self.op in ("rename", "link"):
            return f"{self.op} {rel(self.path)} -> {rel(self.a[0])}"
        if self.op == "write":
            return f"write {rel(self.path)} [{self.a[0]}+{self.a[1]}]"
        return f"{self.op} {rel(self.path)}" + (" (dir)" if self.op == "fsync" and self.kind == "d" else "")


def load(log):
    ops = []
    with open(log) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[1] in ("sfr", "error"):
                continue
            ops.append(Op(len(ops), fields))
    return ops


def snapshot(root, snap):
    subprocess.run(["cp", "-a", root, snap], check=True)
    with open(snap + ".inodes", "w") as f:
        for dp, dns, fns in os.walk(root):
            for n in dns + fns:
                p = os.path.join(dp, n)
                f.write(f"{os.lstat(p).st_ino}\t{os.path.relpath(p, root)}\n")


def durable_at(ops):
    """For each op, the index of the first later fsync that makes it durable
    (len(ops) + 1 when none does)."""
    never = len(ops) + 1
    out = [never] * len(ops)
    last_seen = {}  # inode -> index of the latest fsync of it, scanning backwards
    for op in reversed(ops):
        if op.op == "fsync":
            last_seen[op.ino] = op.i
            continue
        if op.op in DATA:
            out[op.i] = last_seen.get(op.ino, never)
        elif op.op in META:
            out[op.i] = last_seen.get(op.dirs(), never)
    return out


class Replayer:
    def __init__(self, root, snap, ops):
        self.root, self.snap, self.ops = root, snap, ops
        self.inodes0 = {}
        with open(snap + ".inodes") as f:
            for line in f:
                ino, rel = line.rstrip("\n").split("\t", 1)
                self.inodes0.setdefault(int(ino), set()).add(rel)
        self.data = {}

    def blob(self, pid, off, n):
        f = self.data.get(pid)
        if f is None:
            f = self.data[pid] = open(self.log + "." + pid, "rb")
        f.seek(off)
        return f.read(n)

    def rel(self, p):
        return os.path.relpath(p, self.root)

    def build(self, dest, crash, keep, torn):
        """Copies the snapshot to dest and applies ops[:crash] that are in keep
        (torn: op index -> bytes of that write kept)."""
        subprocess.run(["cp", "-a", self.snap, dest], check=True)
        names = {k: set(v) for k, v in self.inodes0.items()}

        def where(ino):
            for r in sorted(names.get(ino, ())):
                if os.path.lexists(os.path.join(dest, r)):
                    return os.path.join(dest, r)
            return None

        def drop_name(r):
            for s in names.values():
                s.discard(r)

        for op in self.ops[:crash]:
            if op.i not in keep:
                continue
            p = os.path.join(dest, self.rel(op.path))
            parent_ok = os.path.isdir(os.path.dirname(p))
            if op.op == "create":
                if parent_ok and not os.path.lexists(p):
                    open(p, "wb").close()
                    names[op.ino] = {self.rel(op.path)}
            elif op.op == "mkdir":
                if parent_ok and not os.path.lexists(p):
                    os.mkdir(p)
                    names[op.ino] = {self.rel(op.path)}
            elif op.op == "link":
                dst = os.path.join(dest, self.rel(op.a[0]))
                if os.path.isdir(os.path.dirname(dst)) and os.path.isfile(p) and not os.path.lexists(dst):
                    os.link(p, dst)
                    names.setdefault(op.ino, set()).add(self.rel(op.a[0]))
            elif op.op == "rename":
                dst = os.path.join(dest, self.rel(op.a[0]))
                if os.path.lexists(p) and os.path.isdir(os.path.dirname(dst)):
                    try:
                        os.rename(p, dst)
                    except OSError:
                        continue
                    drop_name(self.rel(op.a[0]))
                    drop_name(self.rel(op.path))
                    names.setdefault(op.ino, set()).add(self.rel(op.a[0]))
            elif op.op == "unlink":
                if os.path.isfile(p) or os.path.islink(p):
                    os.unlink(p)
                    drop_name(self.rel(op.path))
            elif op.op == "rmdir":
                try:
                    os.rmdir(p)
                    drop_name(self.rel(op.path))
                except OSError:
                    pass
            elif op.op in DATA:
                target = where(op.ino)
                if target is None or not os.path.isfile(target):
                    continue  # no name reaches the inode: its bytes are unreachable
                if op.op == "trunc":
                    os.truncate(target, int(op.a[0]))
                else:
                    off, n, at = int(op.a[0]), int(op.a[1]), int(op.a[2])
                    n = torn.get(op.i, n)
                    if n <= 0:
                        continue
                    with open(target, "r+b") as f:
                        f.seek(off)
                        f.write(self.blob(op.pid, at, n))


def tree_hash(d):
    h = hashlib.sha256()
    for dp, dns, fns in sorted(os.walk(d)):
        dns.sort()
        for n in sorted(fns):
            p = os.path.join(dp, n)
            h.update(os.path.relpath(p, d).encode() + b"\0")
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
        for n in dns:
            h.update(os.path.relpath(os.path.join(dp, n), d).encode() + b"/\0")
    return h.hexdigest()


def variants(ops, dur, crash):
    """The (name, keep, torn) states sampled at one crash point."""
    pend_meta, pend_data, keep0 = [], {}, set()
    for op in ops[:crash]:
        if op.op not in META and op.op not in DATA:
            continue
        if dur[op.i] < crash:
            keep0.add(op.i)
        elif op.op in META:
            pend_meta.append(op.i)
        else:
            pend_data.setdefault(op.ino, []).append(op.i)
    all_data = {i for v in pend_data.values() for i in v}
    everything = keep0 | set(pend_meta) | all_data
    yield "none", keep0, {}
    yield "all", everything, {}
    for k, m in enumerate(pend_meta):
        yield f"prefix:{k}", keep0 | set(pend_meta[:k]) | all_data, {}
        if k + 1 < len(pend_meta):
            yield f"drop:{k}", everything - {m}, {}
    for ino, idx in pend_data.items():
        yield f"lose:{ops[idx[0]].path}", everything - set(idx), {}
        last = ops[idx[-1]]
        if last.op == "write":
            off, n = int(last.a[0]), int(last.a[1])
            cut = (off + n - 1) // BLOCK * BLOCK - off  # the last 4 KiB boundary inside it
            if 0 <= cut < n:
                yield f"torn:{last.path}@{off + cut}", everything, {last.i: cut}


def states(log, root, snap, out, max_states, seed):
    ops = load(log)
    dur = durable_at(ops)
    rp = Replayer(root, snap, ops)
    rp.log = log
    points = [op.i for op in ops if op.op == "fsync" or op.op in META] + [len(ops)]
    cands = []
    sigs = set()
    for c in points:
        for name, keep, torn in variants(ops, dur, c):
            sig = (frozenset(keep), tuple(sorted(torn.items())))
            if sig not in sigs:  # the same operations applied: the same tree
                sigs.add(sig)
                cands.append((c, name, keep, torn))
    # a stable sample when there are more candidates than the budget
    if max_states and len(cands) > max_states:
        rng = random.Random(seed)
        cands = sorted(rng.sample(cands, max_states), key=lambda x: x[0])
    os.makedirs(out, exist_ok=True)
    seen = {}
    n = 0
    with open(os.path.join(out, "states.tsv"), "w") as tsv:
        for c, name, keep, torn in cands:
            d = os.path.join(out, f"s{n:05d}")
            rp.build(d, c, keep, torn)
            h = tree_hash(d)
            before = ops[c].short(root) if c < len(ops) else "the end"
            if h in seen:
                shutil.rmtree(d)
                continue
            seen[h] = d
            lost = sorted((keep_all(ops, c) - keep) | set(torn))
            lost_s = "; ".join(ops[i].short(root) + (" (torn)" if i in torn else "") for i in lost[:6])
            if len(lost) > 6:
                lost_s += f"; ... {len(lost) - 6} more"
            tsv.write(f"s{n:05d}\tcrash before op {c} ({before})\t{name}\tlost: {lost_s or 'nothing'}\n")
            n += 1
    print(f"{len(ops)} operations, {len(points)} crash points, {len(cands)} sampled states, "
          f"{n} distinct")


def keep_all(ops, c):
    return {op.i for op in ops[:c] if op.op in META or op.op in DATA}


def main():
    a = sys.argv[1:]
    if a and a[0] == "snapshot" and len(a) == 3:
        snapshot(a[1], a[2])
    elif a and a[0] == "states" and len(a) >= 5:
        max_states, seed = 0, 1
        rest = a[5:]
        while rest:
            if rest[0] == "--max":
                max_states = int(rest[1])
            elif rest[0] == "--seed":
                seed = int(rest[1])
            else:
                sys.exit(f"replay.py: unknown option {rest[0]}")
            rest = rest[2:]
        states(a[1], a[2], a[3], a[4], max_states, seed)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
