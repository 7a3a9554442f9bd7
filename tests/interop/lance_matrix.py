# lance_matrix.py: the compatibility matrix of brid against three Lance versions, driven
# by tests/interop/test_lance_matrix.sh: writer x table kind x operation x reader.
#
#   python3 tests/interop/lance_matrix.py WORKDIR
#
# Writers and readers: lance12 = LanceDB 0.39.0 from npm (lance_make.mjs,
# lance_indexed.mjs, lance_batch.mjs), lance13 = LanceDB 0.40.0's own native core and
# lance14 = pylance 14.0.3 (lance_py.py).  Kinds: see lance_py.py's header (lance12
# writes blob, deleted, stable and indexed with lance_make.mjs/lance_indexed.mjs).
# Operations, each on its own copy (cp -a) of the source table:
#   auto, link, copy   brictl compact --strategy S
#   bri                brictl compact --strategy bri: every stock Lance must refuse the
#                      result by feature flag (bit 40) when it has a Blob Reuse Index
#                      (a table without Blob v2 payloads gets none, and is read)
#   materialize        bri, then brictl materialize
#   cleanup            auto, then brictl cleanup --older-than 0 --grace 0
#   shallow, deep      brictl clone SRC DST --shallow / --deep (of the source itself)
#   py                 link (--target-rows 20, indexed 100: leaving Lance's compaction
#                      something to merge), then pylance 14's compact_files() and
#                      cleanup_old_versions(older_than=0, delete_unverified=True); read
#                      by lance14 only (the last writer)
#   matpy              bri + materialize + brictl cleanup --older-than 0 (Lance's own
#                      cleanup reads every listed manifest and refuses the BRI versions
#                      a materialize leaves in the history), then the same pylance 14
#                      operations
#   opt13              link (as py), then LanceDB 0.40's native optimize() (Lance 13, cleanup of
#                      every older version); read by lance13 and lance14 (not on
#                      Managed tables, which Lance 13 cannot open)
# Cells, one line each ("writer/kind/op/slot: ok ..." or "... FAIL why"):
#   W/K/source/manifest  the latest manifest's sections (lance_py.py manifest): the
#                      index section (field 6) and the inline transaction (21 up to
#                      Lance 13, 23 from Lance 14) are where the fields say
#   W/K/source/R       reader R reads the source with the same row count and per-column
#                      SHA-256 as the other readers that read it (the canonical hash),
#                      or refuses it as expected (Managed: Lance <= 13, "Flags: 16384");
#                      Lance 12 and 13 on a 2.3 table: noted, no further cells
#   W/K/OP/brid        brid's operation and brictl verify of its result succeeded; on
#                      a 2.3 table brid must refuse, naming 2.3, with nothing written
#                      (brid's .brid.lock aside), or (clones) clone, verify and be read
#   W/K/OP/pylance     pylance 14's compact_files + cleanup_old_versions succeeded
#   W/K/OP/lancedb     LanceDB 0.40's optimize() succeeded
#   W/K/OP/manifest    the result's latest manifest, as for the source
#   W/K/cleanup/blobs  (Managed kinds) brid's compaction + cleanup leaves exactly the
#                      payload objects (_blobs/*, data/<stem>/*.blob) that Lance's own
#                      compact_files() + cleanup_old_versions() leave on a copy; and
#                      every compaction of a Managed table (W/K/OP/brid) reports
#                      payload_bytes_copied 0
#   W/K/OP/R           R reads the result exactly as it read the source: rows,
#                      countRows, every column hash, on indexed tables every query
#                      answer (after opt13: exact vector answers, FTS matches, counts,
#                      since optimize() extends the indexes), and Lance 14 reads the
#                      latest transaction; or refuses it as expected (a result with
#                      flag 1<<40, a BRI: every stock Lance; Managed: Lance <= 13).
#                      When answers differ after py/matpy/opt13, the cell says whether
#                      Lance alone answers the same (its own compact_files with
#                      defer_index_remap=True, i.e. a fragment reuse index as brid
#                      writes, then the same operation, on a copy of the source).
#   lance12/canon:T/read/R   a LanceDB 0.39 table of lance_make.mjs (every type it
#                      writes): lance_py.py's reader R gives exactly lance_read.mjs's rows
#                      and column hashes.
# Environment: BRICTL (brictl), LANCE_PY (the venv's python) [REPO/.deps/py/bin/python],
# MATRIX_ONLY (a regular expression: only the cells whose name it matches, e.g.
# "lance14/indexed" or "/link/"), MATRIX_JOBS (brictl operations run at a time) [2].
# Exit status 1 when a cell failed.  WORKDIR/results.json keeps every reader's JSON and
# every decoded manifest (KEEP_TMP=1 keeps WORKDIR, see lib.sh).

import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BRICTL = os.environ.get("BRICTL") or os.path.join(REPO, "build", "bin", "brictl")
PY = os.environ.get("LANCE_PY") or os.path.join(REPO, ".deps", "py", "bin", "python")
NODE = "node"
LANCE_PY = os.path.join(HERE, "lance_py.py")
ONLY = re.compile(os.environ.get("MATRIX_ONLY") or ".")
JOBS = int(os.environ.get("MATRIX_JOBS") or 2)

READERS = ["lance12", "lance13", "lance14"]
KINDS = {
    "lance12": ["blob", "deleted", "stable", "indexed"],
    "lance13": ["blob", "deleted", "stable", "indexed"],
    "lance14": ["blob", "deleted", "stable", "indexed", "managed", "manageddel", "switched", "v23"],
}
MANAGED = {"managed", "manageddel", "switched"}
OPS = ["auto", "link", "copy", "bri", "materialize", "cleanup", "shallow", "deep", "py", "matpy", "opt13"]
CANON = ["plain", "blobs", "types", "nested", "blobnest", "extras", "largelist"]
FLAG_BRI = 1 << 40
FLAG_MANAGED = 1 << 14


def op_slots(kind, op):
    """The cells of one operation on one kind: the operation's own, then its readers."""
    if op in ("py", "matpy"):
        return ["brid", "pylance", "manifest", "lance14"]
    if op == "opt13":
        return ["brid", "lancedb", "manifest", "lance13", "lance14"]
    if op == "cleanup" and kind in MANAGED:
        return ["brid", "manifest", "blobs"] + READERS
    return ["brid", "manifest"] + READERS


def applicable(kind, op):
    return not (op == "opt13" and kind in MANAGED)


def all_cells():
    cells = []
    for w, kinds in KINDS.items():
        for k in kinds:
            cells += [f"{w}/{k}/source/{r}" for r in ["make", "manifest"] + READERS]
            for op in OPS:
                if applicable(k, op):
                    cells += [f"{w}/{k}/{op}/{s}" for s in op_slots(k, op)]
    for t in CANON:
        cells += [f"lance12/canon:{t}/read/{r}" for r in ("lance13", "lance14")]
    return cells


# ------------------------------------------------------------------ helpers
def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def last_line(s, n=400):
    s = (s or "").strip()
    lines = [x for x in s.splitlines() if x.strip() and not re.match(r"^\[\S+ (WARN|INFO)", x)]
    return (lines[-1] if lines else s)[:n]


def files_of(path):
    """{relative name: (size, mtime)} of the files below path (brid's lock file aside: it
    stays in a table brid has locked, and is no part of the table)."""
    out = {}
    for root, _, names in os.walk(path):
        for n in names:
            if n == ".brid.lock":
                continue
            p = os.path.join(root, n)
            st = os.lstat(p)
            out[os.path.relpath(p, path)] = (st.st_size, st.st_mtime_ns)
    return out


def payload_objects(table):
    """The Blob v2 payload objects of a table: _blobs/* and data/<stem>/*.blob."""
    out = set()
    for sub in ("_blobs", "data"):
        for root, _, names in os.walk(os.path.join(table, sub)):
            out |= {os.path.relpath(os.path.join(root, n), table) for n in names
                    if sub == "_blobs" or n.endswith(".blob")}
    return out


def jsonl(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def batch(argv_prefix, tables, what):
    """Runs argv_prefix + tables (a lance_py.py or lance_batch.mjs command that prints one
    JSON line per table); a process that dies leaves the first table it did not report
    as {"error": "... process died ..."} and runs again on the rest."""
    results, todo = {}, [os.path.abspath(t) for t in tables]
    while todo:
        p = run(argv_prefix + todo)
        for r in jsonl(p.stdout):
            results[r["table"]] = r
        rest = [t for t in todo if t not in results]
        if rest and rest == todo or (rest and p.returncode != 0):
            results[rest[0]] = {"table": rest[0], "error": f"{what} process died (exit {p.returncode}): {last_line(p.stderr)}"}
            rest = rest[1:]
        elif rest:
            for t in rest:
                results[t] = {"table": t, "error": f"{what} reported nothing: {last_line(p.stderr)}"}
            rest = []
        todo = rest
    return results


def flags_of(msg):
    m = re.search(r"Flags: (\d+)", msg or "")
    return int(m.group(1)) if m else None


def same_read(a, b):
    """Why two reads of a table differ ("" if they do not): rows, countRows, columns."""
    why = []
    if a.get("rows") != b.get("rows"):
        why.append(f"rows {a.get('rows')} != {b.get('rows')}")
    if "countRows" in a and "countRows" in b and a["countRows"] != b["countRows"]:
        why.append(f"countRows {a['countRows']} != {b['countRows']}")
    ca, cb = a.get("columns", {}), b.get("columns", {})
    if set(ca) != set(cb):
        why.append(f"columns {sorted(ca)} != {sorted(cb)}")
    for c in sorted(set(ca) & set(cb)):
        if ca[c].get("sha256") != cb[c].get("sha256"):
            why.append(f"column {c} hash differs")
    return "; ".join(why)


def diff_json(a, b, path="$", out=None, ignore=("version", "fragments")):
    out = [] if out is None else out
    if len(out) >= 3:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in ignore:
                continue
            diff_json(a.get(k), b.get(k), f"{path}.{k}", out, ignore)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff_json(x, y, f"{path}[{i}]", out, ignore)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}")
    return out


def loose(ans):
    """What optimize() keeps of a table's answers: it adds the unindexed rows to every
    index, so the FTS scores (BM25 over the corpus) and the default vector answers
    (which now probe more rows) change; exact vector answers, FTS matches and counts
    do not."""
    if not isinstance(ans, dict) or "error" in ans:
        return ans
    return {"exact": ans.get("exact"), "counts": ans.get("counts"),
            "fts": {k: sorted(r[0] for r in v) for k, v in (ans.get("fts") or {}).items()},
            "indices": [[i.get("name"), i.get("columns")] for i in ans.get("indices") or []]}


# ------------------------------------------------------------------ the run
class Matrix:
    def __init__(self, work):
        self.work = os.path.abspath(work)
        self.cells = [c for c in all_cells() if ONLY.search(c)]
        self.results = []          # (cell, ok, text)
        self.timing = {}
        need = {tuple(c.split("/")[:3]) for c in self.cells}
        self.sources = sorted({(w, k) for w, k, _ in need if not k.startswith("canon:")})
        self.ops = {(w, k): [op for op in OPS if (w, k, op) in need] for w, k in self.sources}
        self.canon = [k.split(":", 1)[1] for w, k, _ in need if k.startswith("canon:")]
        self.readers = [r for r in READERS if any(c.endswith("/" + r) for c in self.cells)]

    def src(self, w, k):
        return os.path.join(self.work, "src", w, f"{k}.lance")

    def dst(self, w, k, op):
        return os.path.join(self.work, op, w, f"{k}.lance")

    def cell(self, name, ok, text=""):
        if not ONLY.search(name):
            return
        status = "ok" if ok else "FAIL"
        line = f"{name}: {status}{' ' + text if text else ''}"
        print(line, flush=True)
        self.results.append((name, ok, line))

    # ------------------------------------------------------------ sources
    def make_sources(self):
        t0 = time.time()
        jobs = []
        by_writer = {}
        for w, k in self.sources:
            os.makedirs(os.path.dirname(self.src(w, k)), exist_ok=True)
            by_writer.setdefault(w, []).append(k)
        self.made = {}

        def lance12(k):
            d = os.path.join(self.work, "src", "lance12")
            mk = [NODE, os.path.join(HERE, "lance_make.mjs"), "--out", d, "--tables", "blobs", "--blob-name", k]
            if k == "blob":
                argv = mk + ["--blob-batches", "1:mixed,3:3:300,2:3:100K", "--blob-delete", ""]
            elif k == "deleted":
                argv = mk + ["--blob-batches", "2:5:300,2:5:20K,2:5:100K", "--blob-delete", "id % 5 = 2 OR id = 21"]
            elif k == "stable":
                argv = mk + ["--blob-batches", "3:5:300,3:5:100K", "--stable-row-ids", "--blob-delete", "id % 5 = 3"]
            else:
                argv = [NODE, os.path.join(HERE, "lance_indexed.mjs"), "make", self.src("lance12", k),
                        "--appends", "32", "--rows", "50", "--skip", "cat,tags,vflat,vhnsw"]
            p = run(argv)
            return k, (None if p.returncode == 0 else last_line(p.stderr))

        def py_writer(w, kinds):
            p = run([PY, LANCE_PY, "make", "--writer", w] + [f"{k}={self.src(w, k)}" for k in kinds])
            got = {r["kind"]: r for r in jsonl(p.stdout)}
            return {k: (got[k].get("error") if k in got else f"lance_py.py make: {last_line(p.stderr)}") for k in kinds}

        with cf.ThreadPoolExecutor(3) as ex:
            futs = []
            if "lance12" in by_writer:
                futs.append(("lance12", ex.submit(lambda: dict(lance12(k) for k in by_writer["lance12"]))))
            for w in ("lance13", "lance14"):
                if w in by_writer:
                    futs.append((w, ex.submit(py_writer, w, by_writer[w])))
            if self.canon:
                d = os.path.join(self.work, "canon")
                futs.append(("canon", ex.submit(run, [NODE, os.path.join(HERE, "lance_make.mjs"), "--out", d,
                                                      "--tables", ",".join(self.canon), "--small"])))
            for w, f in futs:
                r = f.result()
                if w == "canon":
                    if r.returncode != 0:
                        raise SystemExit(f"lance_make.mjs (canonical tables) failed: {last_line(r.stderr)}")
                    continue
                for k, err in r.items():
                    self.made[(w, k)] = err
                    if err:
                        print(f"{w}/{k}: writing the source failed: {err}", flush=True)
        self.timing["sources"] = time.time() - t0

    # ------------------------------------------------------------ brid's operations
    def brictl(self, *args):
        p = run([BRICTL, *args])
        return p.returncode == 0, (p.stdout or "") + (p.stderr or "")

    def one_op(self, w, k, op):
        """Runs op on source (w, k) (on a copy, but for clones); returns (ok, text, made,
        wrote): made tells whether the operation itself succeeded (ok also needs brictl
        verify to pass on its result), wrote whether a refused one left files behind (in
        the copy, the source or the clone)."""
        s, d = self.src(w, k), self.dst(w, k, op)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if op in ("shallow", "deep"):
            before = files_of(s)
            ok, out = self.brictl("clone", s, d, f"--{op}")
            if not ok:
                return False, f"brictl clone --{op}: {last_line(out)}", False, before != files_of(s) or bool(files_of(d))
            ok, out = self.brictl("verify", d, "--offline")
            return ok, ("" if ok else f"brictl verify: {last_line(out, 600)}"), True, False
        subprocess.run(["cp", "-a", s, d], check=True)
        before = files_of(d)
        strategy = {"materialize": "bri", "matpy": "bri", "cleanup": "auto", "py": "link", "opt13": "link"}.get(op, op)
        argv = ["compact", d, "--strategy", strategy, "--offline", "--json"]
        if op in ("py", "matpy", "opt13"):
            # leave Lance's own compaction something to merge
            argv += ["--target-rows", "100" if k == "indexed" else "20"]
        ok, out = self.brictl(*argv)
        if not ok:
            return False, f"brictl {' '.join(x for x in argv if x != d)}: {last_line(out)}", False, before != files_of(d)
        if k in MANAGED:
            # Managed blobs: every strategy keeps the descriptors and copies no payload
            try:
                copied = json.loads(out[out.index("{"):out.rindex("}") + 1]).get("payload_bytes_copied")
            except ValueError:
                copied = "?"
            if copied != 0:
                return False, f"brictl compact --strategy {strategy} of a Managed table copied {copied} payload bytes", True, False
        if op in ("materialize", "matpy"):
            ok, out = self.brictl("materialize", d, "--offline")
            if not ok:
                return False, f"brictl materialize: {last_line(out)}", True, False
        if op == "matpy":
            ok, out = self.brictl("cleanup", d, "--older-than", "0", "--grace", "0", "--offline")
            if not ok:
                return False, f"brictl cleanup: {last_line(out)}", True, False
        if op == "cleanup":
            ok, out = self.brictl("cleanup", d, "--older-than", "0", "--grace", "0", "--offline")
            if not ok:
                return False, f"brictl cleanup: {last_line(out)}", True, False
            left = [n for n in os.listdir(os.path.join(d, "_versions")) if n.endswith(".manifest")]
            if len(left) != 1:
                return False, f"brictl cleanup --older-than 0 left {len(left)} versions", True, False
        ok, out = self.brictl("verify", d, "--offline")
        return ok, ("" if ok else f"brictl verify: {last_line(out, 600)}"), True, False

    def run_ops(self):
        """brid's operations (MATRIX_JOBS at a time), then Lance's own on their results
        (one process per command); self.outcome[(w, k, op)] = (brid cell ok, text, result
        exists to read), self.lance_op[(w, k, op)] = error or None."""
        t0 = time.time()
        self.outcome, self.lance_op = {}, {}
        work = [(w, k, op) for (w, k), ops in self.ops.items() if not self.made.get((w, k)) for op in ops]
        with cf.ThreadPoolExecutor(JOBS) as ex:
            futs = {ex.submit(self.one_op, w, k, op): (w, k, op) for w, k, op in work}
            for f in cf.as_completed(futs):
                w, k, op = futs[f]
                ok, text, made, wrote = f.result()
                if k != "v23":
                    self.outcome[(w, k, op)] = (ok, text, ok)
                elif not made:
                    # brid refuses 2.3 files with a message naming 2.3 and writes nothing
                    good = "2.3" in text and not wrote
                    why = ([] if "2.3" in text else ["the message does not name 2.3"]) + (["files were written"] if wrote else [])
                    self.outcome[(w, k, op)] = (good, ("refused as expected: " if good else "") + text +
                                                ("" if good else " (" + ", ".join(why) + ")"), False)
                elif op in ("shallow", "deep"):
                    # a clone need not decode a file: one that brid makes, verifies and
                    # Lance 14 reads like the source is fine too
                    self.outcome[(w, k, op)] = (ok, "cloned, not refused" + (f"; {text}" if text else ""), ok)
                else:
                    self.outcome[(w, k, op)] = (False, "brid did not refuse a 2.3 table" + (f"; {text}" if text else ""), ok)
        self.timing["brid"] = time.time() - t0
        t0 = time.time()
        # Lance's own equivalent, for the indexed kind: Lance compacts the source itself
        # with a fragment reuse index (what brid writes), then the same operation
        self.refs = {}
        for (w, k, op), (ok, _, readable) in self.outcome.items():
            if k == "indexed" and op in ("py", "matpy", "opt13") and ok and readable:
                self.refs[(w, k, op)] = r = os.path.join(self.work, "ref-" + op, w, f"{k}.lance")
                os.makedirs(os.path.dirname(r), exist_ok=True)
                subprocess.run(["cp", "-a", self.src(w, k), r], check=True)
        if self.refs:
            batch([PY, LANCE_PY, "compact", "--target-rows", "100", "--defer-index-remap"], list(self.refs.values()),
                  "lance_py.py compact")
        # Managed tables: which payload objects Lance's own compact_files() and
        # cleanup_old_versions() leave, for the cleanup/blobs cells
        self.blob_refs = {}
        for (w, k, op), (ok, _, readable) in self.outcome.items():
            if k in MANAGED and op == "cleanup" and ok:
                self.blob_refs[(w, k)] = r = os.path.join(self.work, "ref-cleanup", w, f"{k}.lance")
                os.makedirs(os.path.dirname(r), exist_ok=True)
                subprocess.run(["cp", "-a", self.src(w, k), r], check=True)
        for c in ["compact", "cleanup"] if self.blob_refs else []:
            batch([PY, LANCE_PY, c], list(self.blob_refs.values()), f"lance_py.py {c}")
        for op, cmds in (("py", ["compact", "cleanup"]), ("matpy", ["compact", "cleanup"]), ("opt13", ["optimize"])):
            refs = [r for (w, k, o), r in self.refs.items() if o == op]
            for c in cmds if refs else []:
                batch([PY, LANCE_PY, c], refs, f"lance_py.py {c}")
        for op, cmds in (("py", ["compact", "cleanup"]), ("matpy", ["compact", "cleanup"]), ("opt13", ["optimize"])):
            tabs = [(w, k) for (w, k, o), (ok, _, readable) in self.outcome.items() if o == op and ok and readable]
            for c in cmds:
                live = [(w, k) for w, k in tabs if not self.lance_op.get((w, k, op))]
                if not live:
                    break
                res = batch([PY, LANCE_PY, c], [self.dst(w, k, op) for w, k in live], f"lance_py.py {c}")
                for w, k in live:
                    r = res.get(self.dst(w, k, op)) or {"error": "not reported"}
                    self.lance_op[(w, k, op)] = f"{c}: {last_line(r['error'])}" if "error" in r else None
        self.timing["lance ops"] = time.time() - t0

    # ------------------------------------------------------------ reads
    def read_all(self):
        t0 = time.time()
        tables = [self.src(w, k) for w, k in self.sources if not self.made.get((w, k))]
        tables += [self.dst(w, k, op) for (w, k, op), (_, _, readable) in sorted(self.outcome.items())
                   if readable and not self.lance_op.get((w, k, op))]
        tables += list(self.refs.values())
        canon = [os.path.join(self.work, "canon", f"{t}.lance") for t in self.canon]
        cmds = {
            "lance12": [NODE, os.path.join(HERE, "lance_batch.mjs"), "--answers"],
            "lance13": [PY, LANCE_PY, "read", "--reader", "lance13", "--answers"],
            "lance14": [PY, LANCE_PY, "read", "--reader", "lance14", "--answers"],
        }
        readers = set(self.readers) | (set(READERS) if canon else set())
        self.reads = {}
        with cf.ThreadPoolExecutor(4) as ex:
            futs = {r: ex.submit(batch, cmds[r], tables + canon, r) for r in READERS if r in readers}
            man = ex.submit(batch, [PY, LANCE_PY, "manifest"], tables, "lance_py.py manifest")
            for r, f in futs.items():
                self.reads[r] = f.result()
            self.manifests = man.result()
        self.timing["reads"] = time.time() - t0
        with open(os.path.join(self.work, "results.json"), "w") as fh:
            json.dump({"reads": self.reads, "manifests": self.manifests}, fh)

    # ------------------------------------------------------------ cells
    def refused(self, name, x, flag, what):
        fl = flags_of((x or {}).get("error"))
        ok = fl is not None and fl & flag != 0
        self.cell(name, ok, f"refused as expected: Flags: {fl}" if ok else
                  f"expected a refusal by {what}, got: {last_line(x.get('error') or 'a read of %s rows' % x.get('rows'))}")

    def manifest_cell(self, name, path):
        m = self.manifests.get(path) or {"error": "not decoded"}
        if "error" in m:
            self.cell(name, False, last_line(m["error"]))
        else:
            p = m.get("sectionProblems") or []
            self.cell(name, not p, "; ".join(p) or
                      f"{m.get('writer')}, flags {m.get('readerFlags', 0)}/{m.get('writerFlags', 0)}, fields {','.join(map(str, m['fields']))}")

    def compare(self, name, sx, x, op, ref=None):
        """Reader cell: result x as the reader read the source sx (ref: how the reader read
        Lance's own equivalent of the result, if there is one)."""
        if "error" in x:
            self.cell(name, False, last_line(x["error"]))
            return
        why = same_read(sx, x)
        tx = x.get("transaction")
        if isinstance(tx, dict):
            why = (why + "; " if why else "") + "the latest transaction: " + last_line(tx.get("error"))
        if not why and "answers" in sx:
            a, b = sx["answers"], x.get("answers")
            if b is None:
                why = "no answers (no index listed)"
            else:
                if op == "opt13":   # Lance's optimize() also extends the indexes
                    a, b = loose(a), loose(b)
                d_ = diff_json(a, b)
                if d_:
                    why = "answers differ: " + "; ".join(d_)
                    rb = (ref or {}).get("answers")
                    if rb is not None and not diff_json(loose(rb) if op == "opt13" else rb, b):
                        why += (" (Lance alone answers exactly so: its own compact_files(defer_index_remap=True)"
                                f" then the same {op} on the source)")
        self.cell(name, not why, why or (f"{x['rows']} rows" + (", same answers" if "answers" in sx else "")))

    def evaluate(self):
        for t in self.canon:
            p = os.path.join(self.work, "canon", f"{t}.lance")
            ref = self.reads["lance12"].get(p, {"error": "not read"})
            for r in ("lance13", "lance14"):
                got = self.reads[r].get(p, {"error": "not read"})
                name = f"lance12/canon:{t}/read/{r}"
                if "error" in ref:
                    self.cell(name, False, f"lance_read.mjs failed: {last_line(ref['error'])}")
                elif "error" in got:
                    self.cell(name, False, f"{r} failed: {last_line(got['error'])}")
                else:
                    why = same_read(ref, got)
                    self.cell(name, not why, why or f"{ref['rows']} rows, {len(ref['columns'])} columns: lance_read.mjs's hashes")
        for w, k in self.sources:
            if self.made.get((w, k)):
                self.cell(f"{w}/{k}/source/make", False, f"the source was not written: {self.made[(w, k)]}")
                continue
            s = self.src(w, k)
            self.manifest_cell(f"{w}/{k}/source/manifest", s)
            src_reads = {r: self.reads.get(r, {}).get(s) for r in READERS}
            good = [r for r in READERS if src_reads[r] and "error" not in src_reads[r]]
            ref = src_reads[good[-1]] if good else None
            for r in READERS:
                x = src_reads[r]
                name = f"{w}/{k}/source/{r}"
                if x is None:
                    continue
                if k in MANAGED and r != "lance14":
                    self.refused(name, x, FLAG_MANAGED, "flag 16384")
                elif "error" in x:
                    ok = k == "v23" and r != "lance14"
                    self.cell(name, ok, ("cannot read a 2.3 table (no cells): " if ok else "") + last_line(x["error"]))
                elif isinstance(x.get("transaction"), dict):
                    self.cell(name, False, "the latest transaction: " + last_line(x["transaction"].get("error")))
                else:
                    why = same_read(ref, x) if ref is not x else ""
                    self.cell(name, not why, (f"differs from {good[-1]}: {why}" if why else f"{x['rows']} rows"))
            for op in self.ops[(w, k)]:
                out = self.outcome.get((w, k, op))
                if out is None:
                    continue
                ok, text, readable = out
                self.cell(f"{w}/{k}/{op}/brid", ok, text)
                if not readable:
                    continue
                d = self.dst(w, k, op)
                if op in ("py", "matpy", "opt13"):
                    slot = "lancedb" if op == "opt13" else "pylance"
                    e = self.lance_op.get((w, k, op))
                    self.cell(f"{w}/{k}/{op}/{slot}", e is None, e or "")
                    if e:
                        continue
                self.manifest_cell(f"{w}/{k}/{op}/manifest", d)
                if (w, k) in self.blob_refs and op == "cleanup":
                    mine, lances = payload_objects(d), payload_objects(self.blob_refs[(w, k)])
                    self.cell(f"{w}/{k}/{op}/blobs", mine == lances,
                              f"{len(mine)} payload objects left, as Lance's own compact_files + cleanup_old_versions"
                              if mine == lances else
                              f"brid left {sorted(mine - lances) or 'no more'} beyond Lance's and deleted "
                              f"{sorted(lances - mine) or 'nothing more'} that Lance keeps")
                man = self.manifests.get(d) or {}
                for r in op_slots(k, op):
                    if r not in READERS:
                        continue
                    name = f"{w}/{k}/{op}/{r}"
                    x, sx = self.reads.get(r, {}).get(d), src_reads[r]
                    if x is None or sx is None:
                        continue
                    if man.get("readerFlags", 0) & FLAG_BRI:
                        # a Blob Reuse Index: no stock Lance may read the table
                        self.refused(name, x, FLAG_BRI, "flag 1<<40")
                    elif "error" in sx:
                        if k in MANAGED:
                            self.refused(name, x, FLAG_MANAGED, "flag 16384")
                    else:
                        ref = self.refs.get((w, k, op))
                        self.compare(name, sx, x, op, self.reads.get(r, {}).get(ref) if ref else None)

    def report(self):
        fails = [line for _, ok, line in self.results if not ok]
        t = ", ".join(f"{k} {v:.1f} s" for k, v in self.timing.items())
        print(f"\n{len(self.results)} cells: {len(self.results) - len(fails)} ok, {len(fails)} FAIL ({t})")
        if fails:
            print("failing cells:")
            for line in fails:
                print("  " + line)
        return 1 if fails else 0


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: lance_matrix.py WORKDIR")
    m = Matrix(sys.argv[1])
    if not m.cells:
        sys.exit(f"MATRIX_ONLY={ONLY.pattern} matches no cell")
    t0 = time.time()
    m.make_sources()
    m.run_ops()
    m.read_all()
    m.evaluate()
    m.timing["total"] = time.time() - t0
    sys.exit(m.report())


if __name__ == "__main__":
    main()
