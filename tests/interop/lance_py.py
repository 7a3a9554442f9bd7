# lance_py.py: brid's interop with current Lance from Python. It owns the tables that
# pylance 14.0.3 (Lance 14, "lance14") and LanceDB 0.40.0's own native core (Lance 13.0.0,
# "lance13") write, their reads (row count and per-column SHA-256 in the canonical
# encoding of tests/interop/lance_read.mjs), their query answers, and Lance's own
# compaction and cleanup run on a table.  Run it with the venv scripts/deps.sh makes:
#
#   .deps/py/bin/python tests/interop/lance_py.py COMMAND ...
#
#   make --writer lance13|lance14 KIND[:N]=PATH...   write tables (JSON line per table;
#                                 N: appends, for the kinds that take it)
#   read --reader lance13|lance14 [--answers] PATH...
#                                 rows, countRows and per-column sha256 (JSON line per
#                                 table; --answers adds "answers" on indexed tables)
#   answers --reader lance13|lance14 PATH...    query answers only (JSON line per table)
#   compact [--target-rows N] [--defer-index-remap] PATH...
#                                 pylance 14 ds.optimize.compact_files() ("seconds": the
#                                 call alone, the dataset opened before; with
#                                 target_rows_per_fragment=N, defer_index_remap=True:
#                                 a fragment reuse index, as brid's compaction writes)
#   cleanup PATH...               pylance 14 ds.cleanup_old_versions(older_than=0,
#                                 delete_unverified=True)
#   operations PATH...            every version's operation as pylance 14 reads its transaction
#                                 ({"operations": {"1": "Overwrite", ...}}), with what an
#                                 UpdateConfig changed in the schema metadata
#   append PATH...                pylance 14 appends two fragments of 10 rows (ids 5000-5019,
#                                 the deleted kind's values), Managed when the table's schema
#                                 metadata says so
#   optimize PATH...              LanceDB 0.40's native Table.optimize() (Lance 13),
#                                 cleanup_older_than=0, delete_unverified=True
#   manifest PATH...              the latest manifest, decoded: writer, flags, fields,
#                                 and what is wrong with the sections it points at
#
# A table may be s3://BUCKET/... (the test radosgw: AWS_* as scripts/s3-server.sh prints
# them) or az://CONTAINER/... (Azurite: AZURE_STORAGE_*) for the lance14 commands; "make"
# then reports no "manifest" (it reads local files).
#
# Every command takes many tables and prints one JSON object per table and line, flushed
# as it goes ({"table": PATH, ...}); a table the reader or writer fails on gives
# {"table": PATH, "error": "..."} (Rust panics included: pyo3 raises them as
# BaseException) and the others go on.  Exit status 0 unless the arguments are wrong.
#
# A lance13 process cannot import pylance at all (a meta-path hook refuses "lance"):
# LanceDB 0.40 routes to_lance(), compact_files(), cleanup_old_versions(), to_pandas()
# and some index builds through pylance, that is Lance 14, when it is importable.  What
# Lance wrote is checked by the writer_version of the manifests ("manifest").
#
# Kinds (all deterministic: values are a function of the row id; payloads are
# SHAKE-256 streams; the indexed kind has exactly lance_indexed.mjs's values):
#   blob      id int64, label utf8, n32 int32 (id % 3 == 0 null), blob (Blob v2, Lance's
#             default thresholds: <= 64 KiB inline, <= 4 MiB packed, above dedicated):
#             6 appends x 8 rows: empty, null, 100 B, 20 KB, 64 KiB, 70 KB, 300 KB, and
#             4.5 MiB (dedicated) in appends 1 and 4, 150 KB elsewhere.  File version 2.2.
#   deleted   6 appends x 10 rows (empty, null, 300 B, 5 KB, 70 KB, 120 KB), then
#             delete "id % 4 = 1 OR id = 6": deletion files in every fragment.
#   stable    as deleted, stable row ids on, delete "id % 5 = 3".
#   indexed   lance_indexed.mjs's table (id, num, cat, tags, text, vpq, vflat, vhnsw),
#             32 appends x 50 rows; BTREE on num before append 10, IVF_PQ on vpq (4
#             partitions, 4 sub-vectors) before append 20, FTS (INVERTED) on text before
#             append 30: each index covers a different prefix.
#   managed   (lance14) blob, with schema metadata lance.blob.managed=true from the start.
#   manageddel (lance14) managed, then delete every row of appends 1 and 3 (their _blobs/
#             objects are then named by no live row) and id % 8 = 5 (70 KB values) in
#             the others.
#   switched  (lance14) 6 appends of deleted's rows without the delete (the third with
#             blob's sizes, ids 1020-1029, so that a 4.5 MiB dedicated sidecar is there
#             too), then update_schema_metadata(lance.blob.managed=true) and
#             compact_files() (the old packed and dedicated sidecars become Managed
#             descriptors), then one more append (ids 2000-2009, payloads in _blobs/).
#   switchonly (lance14) switched before pylance's compaction: the schema opts in, the
#             old values are still Packed and Dedicated (what a compaction adopts).
#   v23       (lance14) deleted's rows, 3 appends, data_storage_version 2.3.
#   media     (lance14) what bench/compact_managed_s3.sh measures: appends of 10 rows (40 by
#             default; media:N=PATH for N), a 4.5 MB dedicated value (id % 10 = 0), four
#             200 KB packed, five 10 KB inline; then delete "id % 5 = 2". Plain Blob v2.
#   mediamanaged (lance14) media with schema metadata lance.blob.managed=true from the start.
#   managed80 (lance14) Managed from the start, 10 appends x 20 rows (ids 0-199): 100-300 KB
#             values in packs, 40 KB inline, ids 10, 50, ... 5 MiB dedicated objects; then
#             delete "id % 5 != 0" (80% of the rows, every pack 80% dead).

import hashlib
import json
import os
import struct
import sys
import time
import traceback
from datetime import timedelta

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pbwire import parse as pb_fields  # noqa: E402  (tests/pbwire.py: the wire format by hand)

# Lance's Rust log (pylance and LanceDB): errors only, as LANCEDB_LOG=error for the npm oracle.
os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCEDB_LOG", "error")
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")

USAGE = """usage: lance_py.py make --writer lance13|lance14 KIND[:N]=PATH...
       lance_py.py read --reader lance13|lance14 [--answers] PATH...
       lance_py.py answers --reader lance13|lance14 PATH...
       lance_py.py compact [--target-rows N] [--defer-index-remap] PATH...
       lance_py.py cleanup|append|operations|optimize|manifest PATH..."""


def block_pylance():
    """Makes `import lance` fail in this process, so that LanceDB stays on its own Lance 13."""
    import importlib.abc

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "lance" or name.startswith("lance."):
                raise ModuleNotFoundError("pylance (Lance 14) is blocked in a lance13 process", name=name)

    sys.meta_path.insert(0, Block())


def storage_options(path):
    """What pylance needs to reach a table on an object store, from the environment the test
    servers' scripts print (tests/interop/lance_common.mjs does the same for LanceDB); None for
    a local path."""
    e = os.environ
    if path.startswith("s3://"):
        return {"endpoint": e["AWS_ENDPOINT_URL"], "allow_http": "true", "aws_access_key_id": e["AWS_ACCESS_KEY_ID"],
                "aws_secret_access_key": e["AWS_SECRET_ACCESS_KEY"], "region": e.get("AWS_REGION", "us-east-1"),
                "virtual_hosted_style_request": "false"}
    if path.startswith("az://"):
        return {"account_name": e["AZURE_STORAGE_ACCOUNT_NAME"], "account_key": e["AZURE_STORAGE_ACCOUNT_KEY"],
                "azure_storage_endpoint": e["AZURE_STORAGE_ENDPOINT"], "allow_http": "true"}
    return None


def is_remote(path):
    return storage_options(path) is not None


def table_name(path):
    return path if is_remote(path) else os.path.abspath(path)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error_text(e):
    msg = f"{type(e).__name__}: {e}"
    if os.environ.get("INTEROP_DEBUG") == "1":
        msg += "\n" + traceback.format_exc()
    return msg


# ------------------------------------------------------------------ PRNG (lance_common.mjs)
M64 = (1 << 64) - 1


def seed32(seed, id_, salt):
    z = (seed * 0x9E3779B97F4A7C15 + id_ * 0xBF58476D1CE4E5B9 + salt) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    s = z & 0xFFFFFFFF
    return 0x12345678 if s == 0 else s


def rng(s):
    x = s & 0xFFFFFFFF

    def nxt():
        nonlocal x
        x = (x ^ (x << 13)) & 0xFFFFFFFF
        x ^= x >> 17
        x = (x ^ (x << 5)) & 0xFFFFFFFF
        return x / 4294967296

    return nxt


def pick(r, n):
    return int(r() * n)


def payload(seed, id_, salt, n):
    return hashlib.shake_256(f"{seed}:{id_}:{salt}".encode()).digest(n) if n else b""


# ------------------------------------------------------------------ canonical encoding
# Exactly lance_read.mjs's (read its header): frame(null) = 0x00, frame(v) = 0x01 +
# len(v) as u64 LE + v; a column's hash is SHA-256 over its framed values in key order.

def frame(b):
    return b"\x00" if b is None else b"\x01" + struct.pack("<Q", len(b)) + b


def _fixed(arr, width):
    raw = arr.buffers()[1].to_pybytes()
    off = arr.offset
    valid = arr.is_valid().to_pylist() if arr.null_count else None
    return [None if valid is not None and not valid[i] else raw[(off + i) * width:(off + i + 1) * width]
            for i in range(len(arr))]


def is_blob_field(field):
    import pyarrow as pa
    t = field.type
    if isinstance(t, pa.ExtensionType) and t.extension_name == "lance.blob.v2":
        return True
    md = field.metadata or {}
    return md.get(b"ARROW:extension:name") == b"lance.blob.v2"


def canon(arr, field=None, path="", payloads=None):
    """Canonical bytes (None for null) of every element of pyarrow Array `arr`.  `field`
    is the table-schema field (it marks Blob v2 fields below structs and lists, whose
    data `arr` holds as descriptors); payloads maps a struct-reached blob path to its
    fetched payloads in row order."""
    import pyarrow as pa
    import pyarrow.types as pt
    if field is not None and is_blob_field(field):
        if payloads is not None and path in payloads:
            return payloads[path]
        # a blob inside a list: kind (u8) + size (u64 LE) of its descriptor
        kinds, sizes = arr.field("kind").to_pylist(), arr.field("size").to_pylist()
        valid = arr.is_valid().to_pylist()
        return [bytes([kinds[i]]) + struct.pack("<Q", sizes[i]) if valid[i] else None for i in range(len(arr))]
    t = arr.type
    n = len(arr)
    if isinstance(t, pa.ExtensionType):
        arr = arr.storage
        t = arr.type
    if pt.is_null(t):
        return [None] * n
    if pt.is_integer(t):
        return [None if v is None else str(v).encode() for v in arr.to_pylist()]
    if pt.is_date32(t) or pt.is_time32(t):
        return [None if v is None else str(v).encode() for v in arr.view(pa.int32()).to_pylist()]
    if pt.is_date64(t) or pt.is_time64(t) or pt.is_timestamp(t) or pt.is_duration(t):
        return [None if v is None else str(v).encode() for v in arr.view(pa.int64()).to_pylist()]
    if pt.is_floating(t):
        return _fixed(arr, t.bit_width // 8)
    if pt.is_decimal(t):
        return _fixed(arr, t.bit_width // 8)
    if pt.is_boolean(t):
        return [None if v is None else (b"\x01" if v else b"\x00") for v in arr.to_pylist()]
    if pt.is_string(t) or pt.is_large_string(t) or pt.is_string_view(t):
        return [None if v is None else v.encode() for v in arr.to_pylist()]
    if pt.is_binary(t) or pt.is_large_binary(t) or pt.is_fixed_size_binary(t) or pt.is_binary_view(t):
        return arr.to_pylist()
    valid = arr.is_valid().to_pylist()
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_map(t):
        offs = arr.offsets.to_pylist()
        vf = field.type.value_field if field is not None and not pt.is_map(t) else None
        child = canon(arr.values, vf, path + "[]", payloads)
        return [b"".join(frame(child[j]) for j in range(offs[i], offs[i + 1])) if valid[i] else None
                for i in range(n)]
    if pt.is_fixed_size_list(t):
        k = t.list_size
        vf = field.type.value_field if field is not None else None
        child = canon(arr.values, vf, path + "[]", payloads)
        o = arr.offset
        return [b"".join(frame(c) for c in child[(o + i) * k:(o + i + 1) * k]) if valid[i] else None
                for i in range(n)]
    if pt.is_struct(t):
        kids = []
        for j in range(t.num_fields):
            f = field.type.field(j) if field is not None else None
            name = t.field(j).name
            kids.append(canon(arr.field(j), f, f"{path}.{name}", payloads))
        return [b"".join(frame(c[i]) for c in kids) if valid[i] else None for i in range(n)]
    if pt.is_dictionary(t):
        d = canon(arr.dictionary)
        return [None if ix is None else d[ix] for ix in arr.indices.to_pylist()]
    raise ValueError(f"lance_py.py: no canonical encoding for Arrow type {t}")


def has_nested_blob(field):
    import pyarrow.types as pt
    t = field.type
    if pt.is_struct(t):
        return any(is_blob_field(t.field(j)) or has_nested_blob(t.field(j)) for j in range(t.num_fields))
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return is_blob_field(t.value_field) or has_nested_blob(t.value_field)
    return False


def struct_blob_paths(field, path):
    """Dotted paths of the Blob v2 fields reached from `field` through structs only."""
    import pyarrow.types as pt
    if is_blob_field(field):
        return [path]
    if not pt.is_struct(field.type):
        return []
    t = field.type
    return [p for j in range(t.num_fields) for p in struct_blob_paths(t.field(j), f"{path}.{t.field(j).name}")]


def column_hash(values):
    h = hashlib.sha256()
    nulls = 0
    for v in values:
        if v is None:
            nulls += 1
        h.update(frame(v))
    return h.hexdigest(), nulls


# ------------------------------------------------------------------ readers
class Reader14:
    name = "lance14"

    def __init__(self):
        import lance
        self.lance = lance

    def open(self, path):
        self.ds = self.lance.dataset(path, storage_options=storage_options(path))
        return self

    def schema(self):
        return self.ds.schema

    def scan(self):
        return self.ds.to_table(with_row_id=True)

    def count_rows(self, where=None):
        return self.ds.count_rows(filter=where) if where else self.ds.count_rows()

    def fetch(self, col, row_ids):
        return [b for _, b in self.ds.read_blobs(col, ids=row_ids, preserve_order=True)]

    def version(self):
        return self.ds.version

    def fragments(self):
        return len(self.ds.get_fragments())

    def vector(self, col, q, where, params):
        nearest = {"column": col, "q": q, "k": 10}
        nearest.update(params)
        kw = {"columns": ["id"], "nearest": nearest}
        if where:
            kw.update(filter=where, prefilter=True)
        t = self.ds.to_table(**kw)
        return [[int(i), float(d)] for i, d in zip(t["id"].to_pylist(), t["_distance"].to_pylist())]

    def fts(self, col, term, where):
        kw = {"columns": ["id"], "full_text_query": term, "limit": 100000}
        if where:
            kw.update(filter=where, prefilter=True)
        t = self.ds.to_table(**kw)
        return [[int(i), float(s)] for i, s in zip(t["id"].to_pylist(), t["_score"].to_pylist())]

    def transaction(self):
        """The operation of the latest version's transaction, as Lance 14 reads it (from the
        manifest's inline transaction section, else _transactions/): what a concurrent
        writer's commit reads to check for conflicts."""
        try:
            t = self.ds.read_transaction(self.ds.version)
        except TypeError as e:
            # read and decoded, but pylance's Python classes cannot hold it (pylance
            # 14.0.3 has no room for a Rewrite's rewritten indexes in
            # LanceOperation.RewrittenIndex, even for its own compact_files())
            if "LanceOperation" not in str(e):
                raise
            return "(read; pylance cannot convert it to Python: " + str(e)[:120] + ")"
        return None if t is None else type(t.operation).__name__

    def indices(self):
        out = []
        for ix in self.ds.describe_indices():
            if not ix.field_names:      # system indexes (__lance_frag_reuse): not queried
                continue
            st = self.ds.stats.index_stats(ix.name)
            out.append({"name": ix.name, "type": st.get("index_type"), "columns": list(ix.field_names),
                        "stats": {"numIndexedRows": st.get("num_indexed_rows"),
                                  "numUnindexedRows": st.get("num_unindexed_rows")}})
        return out


class Reader13:
    name = "lance13"

    def __init__(self):
        import lancedb
        self.lancedb = lancedb

    def open(self, path):
        path = os.path.abspath(path.rstrip("/"))
        db = self.lancedb.connect(os.path.dirname(path))
        self.t = db.open_table(os.path.basename(path)[:-len(".lance")] if path.endswith(".lance") else os.path.basename(path))
        return self

    def schema(self):
        return self.t.schema

    def scan(self):
        return self.t.search().with_row_id(True).limit(None).to_arrow()

    def count_rows(self, where=None):
        return self.t.count_rows(where) if where else self.t.count_rows()

    def fetch(self, col, row_ids):
        out = []
        for s in range(0, len(row_ids), 256):
            out.extend(self.t.fetch_blobs(col, row_ids[s:s + 256]).to_pylist())
        return out

    def version(self):
        return self.t.version

    def fragments(self):
        return self.t.stats()["fragment_stats"]["num_fragments"]

    def vector(self, col, q, where, params):
        s = self.t.search(q, vector_column_name=col).limit(10).select(["id"])
        if "nprobes" in params:
            s = s.nprobes(params["nprobes"])
        if "refine_factor" in params:
            s = s.refine_factor(params["refine_factor"])
        if where:
            s = s.where(where, prefilter=True)
        t = s.to_arrow()
        return [[int(i), float(d)] for i, d in zip(t["id"].to_pylist(), t["_distance"].to_pylist())]

    def fts(self, col, term, where):
        s = self.t.search(term, query_type="fts", fts_columns=col).limit(100000).select(["id"])
        if where:
            s = s.where(where, prefilter=True)
        t = s.to_arrow()
        return [[int(i), float(x)] for i, x in zip(t["id"].to_pylist(), t["_score"].to_pylist())]

    def indices(self):
        out = []
        for ix in self.t.list_indices():
            if not ix.columns:
                continue
            st = self.t.index_stats(ix.name)
            out.append({"name": ix.name, "type": st.index_type, "columns": list(ix.columns),
                        "stats": {"numIndexedRows": st.num_indexed_rows, "numUnindexedRows": st.num_unindexed_rows}})
        return out


def make_reader(name):
    if name == "lance13":
        block_pylance()
        return Reader13()
    if name == "lance14":
        return Reader14()
    raise SystemExit(f"lance_py.py: unknown reader {name}\n{USAGE}")


def read_table(rd, path):
    """lance_read.mjs's JSON members table, version, rows, countRows, fragments, key,
    schema and columns ({type, nulls, sha256}; blob.v2 columns also descriptorKinds and
    payloadBytes); lance14 adds transaction (the latest version's operation, or
    {"error"})."""
    import pyarrow.compute as pc
    rd.open(path)
    t0 = time.time()
    schema = rd.schema()
    tbl = rd.scan()
    if "id" not in tbl.column_names:
        raise ValueError("lance_py.py reads tables with an id column only")
    order = pc.sort_indices(tbl["id"])
    tbl = tbl.take(order)
    row_ids = tbl["_rowid"].to_pylist()
    out = {"table": table_name(path), "version": rd.version(), "rows": tbl.num_rows,
           "countRows": rd.count_rows(), "fragments": rd.fragments(), "key": "id", "schema": [], "columns": {}}
    for f in schema:
        col = tbl[f.name].combine_chunks()
        if is_blob_field(f):
            kinds, total = {}, 0
            valid = col.is_valid().to_pylist()
            for k, sz, v in zip(col.field("kind").to_pylist(), col.field("size").to_pylist(), valid):
                key = f"kind{k}" if v else "null"
                kinds[key] = kinds.get(key, 0) + 1
                total += sz if v else 0
            sha, nulls = column_hash(rd.fetch(f.name, row_ids))
            out["schema"].append(f"{f.name}:blob.v2")
            out["columns"][f.name] = {"type": "blob.v2", "nulls": nulls, "sha256": sha,
                                      "descriptorKinds": kinds, "payloadBytes": str(total)}
            continue
        payloads = None
        if has_nested_blob(f):
            payloads = {p: rd.fetch(p, row_ids) for p in struct_blob_paths(f, f.name) if p != f.name}
        sha, nulls = column_hash(canon(col, f, f.name, payloads))
        out["schema"].append(f"{f.name}:{f.type}")
        out["columns"][f.name] = {"type": str(f.type), "nulls": nulls, "sha256": sha}
    if hasattr(rd, "transaction"):
        try:
            out["transaction"] = rd.transaction()
        except BaseException as e:  # noqa: B036
            if isinstance(e, KeyboardInterrupt):
                raise
            out["transaction"] = {"error": error_text(e)}
    out["ms"] = int((time.time() - t0) * 1000)
    return out


# ------------------------------------------------------------------ answers
DIM = 16
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
         "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu red green blue black "
         "white amber").split()
CATS = [f"c{i}" for i in range(8)]


def vector(r):
    return [r() * 2 - 1 for _ in range(DIM)]


QUERIES = [vector(rng(seed32(99, s, 3))) for s in range(3)]
COUNT_WHERES = ["num < 300", "num = 17", "num >= 990", "cat = 'c3'", "cat IN ('c1','c6')",
                "array_has_any(tags, ['t1'])", "array_has_all(tags, ['t2','t3'])", "id % 7 = 3"]


def answers(rd, path):
    """lance_indexed.mjs's answers, for the columns the indexed kind indexes: vector top-10
    (ids, distances) on vpq for three queries, without and with where, with default
    parameters ("vector") and with every partition probed and candidates re-ranked
    ("exact"); every FTS match with its score, sorted by (score desc, id); countRows
    for wheres on the indexed columns; the indexes with their indexed/unindexed rows."""
    rd.open(path)
    out = {"vector": {}, "exact": {}, "fts": {}, "counts": {}, "indices": []}
    indices = rd.indices()
    indexed = {ix["columns"][0] for ix in indices}
    runs = [("vector", "vpq", {}), ("exact", "vpq", {"nprobes": 10000, "refine_factor": 100})]
    for group, col, params in runs:
        if col not in indexed:
            continue
        for s, q in enumerate(QUERIES):
            for where in (None, "num < 500", "cat = 'c3'"):
                key = f"{col}/{s}/{'null' if where is None else where}"
                try:
                    out[group][key] = rd.vector(col, q, where, params)
                except BaseException as e:  # noqa: B036 (pyo3 panics)
                    out[group][key] = "ERROR " + str(e)[:300]
    if "text" in indexed:
        for term in ("alpha", "zulu bravo", "amber"):
            for where in (None, "num < 500"):
                rows = rd.fts("text", term, where)
                rows.sort(key=lambda r: (-r[1], r[0]))
                out["fts"][f"{term}/{'null' if where is None else where}"] = rows
    for w in COUNT_WHERES:
        out["counts"][w] = rd.count_rows(w)
    out["indices"] = sorted(indices, key=lambda x: x["name"])
    out["version"] = rd.version()
    out["fragments"] = rd.fragments()
    return out


# ------------------------------------------------------------------ writers
def blob_rows(kind, start, n, big):
    """(ids, labels, n32, payloads) of rows start..start+n-1 of a blob-ish kind."""
    if kind in ("media", "mediamanaged"):
        size_of = lambda i: 4_500_000 if i % 10 == 0 else 200_000 if i % 10 < 5 else 10_000  # noqa: E731
    elif kind == "managed80":
        cycle = [0, 100_000, 150_000, 200_000, 250_000, 300_000, 40_000]
        size_of = lambda i: (5 << 20) if i % 40 == 10 else cycle[i % len(cycle)]  # noqa: E731
    else:
        if kind in ("blob", "managed"):
            cycle = [0, None, 100, 20_000, 65_536, 70_000, 300_000, 4_718_592 if big else 150_000]
        else:
            cycle = [0, None, 300, 5_000, 70_000, 120_000]
        size_of = lambda i: cycle[i % len(cycle)]  # noqa: E731
    ids, labels, n32, blobs = [], [], [], []
    for id_ in range(start, start + n):
        sz = size_of(id_)
        ids.append(id_)
        labels.append(f"row{id_}:{'null' if sz is None else sz}")
        n32.append(None if id_ % 3 == 0 else (id_ * 2654435761) % 2147483647 - 1073741823)
        blobs.append(None if sz is None else payload(11, id_, 3, sz))
    return ids, labels, n32, blobs


def blob_schema(pa, blob_type_field, managed):
    return pa.schema([pa.field("id", pa.int64(), False), pa.field("label", pa.utf8(), True),
                      pa.field("n32", pa.int32(), True), blob_type_field],
                     metadata={"lance.blob.managed": "true"} if managed else None)


def indexed_batch(pa, start, n):
    rows = {k: [] for k in ("id", "num", "cat", "tags", "text", "vpq", "vflat", "vhnsw")}
    for id_ in range(start, start + n):
        r = rng(seed32(7, id_, 1))
        rows["id"].append(id_)
        rows["num"].append((id_ * 7919) % 1000)
        rows["cat"].append(CATS[pick(r, len(CATS))])
        rows["tags"].append(["t" + str(pick(r, 10)) for _ in range(1 + pick(r, 3))])
        rows["text"].append(" ".join(WORDS[pick(r, len(WORDS))] for _ in range(6 + pick(r, 6))))
        for c in ("vpq", "vflat", "vhnsw"):
            rows[c].append(vector(r))
    fsl = pa.list_(pa.field("item", pa.float32(), True), DIM)
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("num", pa.int64(), True),
                        pa.field("cat", pa.utf8(), True), pa.field("tags", pa.list_(pa.field("item", pa.utf8(), True)), True),
                        pa.field("text", pa.utf8(), True), pa.field("vpq", fsl, True),
                        pa.field("vflat", fsl, True), pa.field("vhnsw", fsl, True)])
    return pa.table(rows, schema=schema)


INDEXED_APPENDS, INDEXED_ROWS = 32, 50
INDEX_AT = {10: "num", 20: "vpq", 30: "text"}
DELETES = {"deleted": "id % 4 = 1 OR id = 6", "stable": "id % 5 = 3", "managed80": "id % 5 != 0",
           "manageddel": "(id >= 8 AND id < 16) OR (id >= 24 AND id < 32) OR id % 8 = 5"}


class Writer14:
    name = "lance14"

    def __init__(self):
        import lance
        import pyarrow as pa
        from lance.blob import blob_array, blob_field
        self.lance, self.pa, self.blob_array, self.blob_field = lance, pa, blob_array, blob_field

    def blob_table(self, kind, start, n, big, managed=False):
        pa = self.pa
        ids, labels, n32, blobs = blob_rows(kind, start, n, big)
        sch = blob_schema(pa, self.blob_field("blob"), managed)
        return pa.table({"id": pa.array(ids, pa.int64()), "label": labels, "n32": pa.array(n32, pa.int32()),
                         "blob": self.blob_array(blobs)}, schema=sch)

    def make(self, kind, path, appends=None):
        lance = self.lance
        if os.path.exists(path):
            raise ValueError(f"{path} exists")
        so = storage_options(path)
        if kind in ("media", "mediamanaged"):
            for k in range(appends or 40):
                data = self.blob_table(kind, k * 10, 10, False, managed=kind == "mediamanaged")
                lance.write_dataset(data, path, mode="create" if k == 0 else "append", storage_options=so)
            ds = lance.dataset(path, storage_options=so)
            ds.delete("id % 5 = 2")
            return ds
        if kind == "indexed":
            for k in range(INDEXED_APPENDS):
                if k in INDEX_AT:
                    ds = lance.dataset(path)
                    col = INDEX_AT[k]
                    if col == "vpq":
                        ds.create_index("vpq", "IVF_PQ", num_partitions=4, num_sub_vectors=4)
                    elif col == "num":
                        ds.create_scalar_index("num", "BTREE")
                    else:
                        ds.create_scalar_index("text", "INVERTED")
                lance.write_dataset(indexed_batch(self.pa, k * INDEXED_ROWS, INDEXED_ROWS), path,
                                    mode="create" if k == 0 else "append", data_storage_version="2.2")
            return lance.dataset(path)
        appends, rows, version = 6, 10, "2.2"
        if kind in ("blob", "managed", "manageddel"):
            rows = 8
        if kind == "v23":
            appends, version = 3, "2.3"
        if kind == "managed80":
            appends, rows = 10, 20
        for k in range(appends):
            data = self.blob_table("blob" if kind == "manageddel" else kind, k * rows, rows, k in (1, 4),
                                   managed=kind in ("managed", "manageddel", "managed80"))
            if kind in ("switched", "switchonly") and k == 2:   # one dedicated sidecar to adopt
                data = self.blob_table("blob", 1000 + k * rows, rows, True)
            lance.write_dataset(data, path, mode="create" if k == 0 else "append", storage_options=so,
                                data_storage_version=version, enable_stable_row_ids=(kind == "stable"))
        ds = lance.dataset(path, storage_options=so)
        if kind in DELETES:
            ds.delete(DELETES[kind])
        if kind in ("switched", "switchonly"):
            ds.update_schema_metadata({"lance.blob.managed": "true"})
        if kind == "switched":
            ds.optimize.compact_files()
            data = self.blob_table("deleted", 2000, rows, False, managed=True)
            lance.write_dataset(data, path, mode="append", storage_options=so)
        return lance.dataset(path, storage_options=so)

    def summary(self, ds):
        return {"rows": ds.count_rows(), "version": ds.version, "fragments": len(ds.get_fragments())}


class Writer13:
    name = "lance13"

    def __init__(self):
        block_pylance()
        import lancedb
        import pyarrow as pa
        from lancedb.index import FTS, BTree, IvfPq
        self.lancedb, self.pa = lancedb, pa
        self.index = {"vpq": lambda: IvfPq(num_partitions=4, num_sub_vectors=4), "num": BTree, "text": FTS}

    def blob_table(self, kind, start, n, big):
        pa = self.pa
        ids, labels, n32, blobs = blob_rows(kind, start, n, big)
        storage = pa.array([None if b is None else {"data": b, "uri": None, "position": None, "size": None}
                            for b in blobs], type=pa.struct([pa.field("data", pa.large_binary()), pa.field("uri", pa.utf8()),
                                                            pa.field("position", pa.uint64()), pa.field("size", pa.uint64())]))
        bf = self.lancedb.blob("blob")
        sch = blob_schema(pa, bf, False)
        arr = pa.ExtensionArray.from_storage(bf.type, storage) if isinstance(bf.type, pa.ExtensionType) else storage
        return pa.table({"id": pa.array(ids, pa.int64()), "label": labels, "n32": pa.array(n32, pa.int32()),
                         "blob": arr}, schema=sch)

    def make(self, kind, path):
        path = os.path.abspath(path)
        if os.path.exists(path):
            raise ValueError(f"{path} exists")
        db = self.lancedb.connect(os.path.dirname(path))
        name = os.path.basename(path)[:-len(".lance")]
        so = {"new_table_data_storage_version": "2.2"}
        if kind == "stable":
            so["new_table_enable_stable_row_ids"] = "true"
        if kind == "indexed":
            t = None
            for k in range(INDEXED_APPENDS):
                if k in INDEX_AT:
                    t.create_index(INDEX_AT[k], config=self.index[INDEX_AT[k]]())
                data = indexed_batch(self.pa, k * INDEXED_ROWS, INDEXED_ROWS)
                if t is None:
                    t = db.create_table(name, data, storage_options=so)
                else:
                    t.add(data)
            return t
        if kind not in ("blob", "deleted", "stable"):
            raise ValueError(f"lance13 does not write kind {kind}")
        rows = 8 if kind == "blob" else 10
        t = None
        for k in range(6):
            data = self.blob_table(kind, k * rows, rows, k in (1, 4))
            if t is None:
                t = db.create_table(name, data, storage_options=so)
            else:
                t.add(data)
        if kind in DELETES:
            t.delete(DELETES[kind])
        return t

    def summary(self, t):
        return {"rows": t.count_rows(), "version": t.version, "fragments": t.stats()["fragment_stats"]["num_fragments"]}


# ------------------------------------------------------------------ manifests
# A manifest file: [u32 len][protobuf Manifest] ... and a 16-byte tail
# [u64 manifest position][u16 major][u16 minor]"LANC".  A raw protobuf walk is enough.

def latest_manifest(path):
    d = os.path.join(path, "_versions")
    best = None
    for n in os.listdir(d):
        if not n.endswith(".manifest"):
            continue
        stem = n[:-len(".manifest")]
        if not stem.isdigit():
            continue
        v = int(stem)
        if len(stem) == 20:          # V2 naming: u64::MAX - version
            v = M64 - v
        if best is None or v > best[0]:
            best = (v, os.path.join(d, n))
    return best


def section_problems(d, pos, offsets):
    """What is wrong with the sections a manifest points at inside its own file:
    field 6 (the index section: IndexMetadata messages, field 1 repeated) and the inline
    transaction (field 21 up to Lance 13, 23 from Lance 14: a Transaction, whose field 2
    is its uuid).  Each is [u32 len][message] before the manifest itself."""
    problems = []

    def section(f, off):
        if off + 4 > pos:
            problems.append(f"field {f} = {off}: past the manifest at {pos}")
            return None
        n = struct.unpack("<I", d[off:off + 4])[0]
        if off + 4 + n > pos:
            problems.append(f"field {f} = {off}: a section of {n} bytes would run past the manifest at {pos}")
            return None
        try:
            return pb_fields(d[off + 4:off + 4 + n])
        except (ValueError, IndexError) as e:
            problems.append(f"field {f} = {off}: not a protobuf message ({e})")
            return None

    if 6 in offsets:
        sec = section(6, offsets[6])
        if sec is not None and any(f != 1 or w != 2 for f, w, _ in sec):
            problems.append(f"field 6 = {offsets[6]}: not an index section")
    for f in (21, 23):
        if f not in offsets:
            continue
        if 6 in offsets and offsets[f] == offsets[6]:
            problems.append(f"field {f} = {offsets[f]}: the index section's offset, not a transaction")
            continue
        sec = section(f, offsets[f])
        if sec is not None and not any(g == 2 and w == 2 and len(v) == 36 for g, w, v in sec):
            problems.append(f"field {f} = {offsets[f]}: not a transaction (no uuid)")
    if 21 in offsets and 23 in offsets and offsets[21] != offsets[23]:
        problems.append(f"fields 21 ({offsets[21]}) and 23 ({offsets[23]}) point at different sections")
    return problems


def decode_manifest(file):
    d = open(file, "rb").read()
    pos, major, minor, magic = struct.unpack("<QHH4s", d[-16:])
    n = struct.unpack("<I", d[pos:pos + 4])[0]
    fields = pb_fields(d[pos + 4:pos + 4 + n])
    offsets = {f: v for f, w, v in fields if f in (6, 21, 23) and w == 0}
    out = {"file": file, "size": len(d), "manifestPos": pos, "formatVersion": f"{major}.{minor}",
           "fields": sorted({f for f, _, _ in fields}), "fragments": sum(1 for f, _, _ in fields if f == 2),
           "sectionProblems": section_problems(d, pos, offsets)}
    for f, w, v in fields:
        if f == 13 and w == 2:
            wv = {a: bytes(c).decode(errors="replace") for a, _, c in pb_fields(v)}
            out["writer"] = f"{wv.get(1, '?')} {wv.get(2, '?')}"
        elif f == 15 and w == 2:
            dv = {a: bytes(c).decode(errors="replace") for a, _, c in pb_fields(v)}
            out["dataFormat"] = f"{dv.get(1, '?')} {dv.get(2, '?')}"
        elif f == 9:
            out["readerFlags"] = v
        elif f == 10:
            out["writerFlags"] = v
        elif w == 0 and f in (3, 6, 8, 11, 14, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28):
            out[f"f{f}"] = v
        elif w == 2 and f not in (1, 2, 5, 7, 12):
            out[f"f{f}"] = f"<{len(v)} bytes>"
    return out


def manifest_info(path):
    best = latest_manifest(path)
    if best is None:
        raise ValueError(f"no manifest in {path}/_versions")
    out = decode_manifest(best[1])
    out["table"] = os.path.abspath(path)
    out["version"] = best[0]
    return out


# ------------------------------------------------------------------ commands
def per_table(paths, fn):
    for p in paths:
        try:
            r = fn(p)
            r.setdefault("table", table_name(p))
            emit(r)
        except BaseException as e:  # noqa: B036 (pyo3 raises Rust panics as BaseException)
            if isinstance(e, KeyboardInterrupt):
                raise
            emit({"table": table_name(p), "error": error_text(e)})


def parse(argv, opts, flags=()):
    a = {k: None for k in opts}
    a.update({k: False for k in flags})
    rest = []
    i = 0
    while i < len(argv):
        x = argv[i]
        if x in ("-h", "--help"):
            print(USAGE)
            sys.exit(0)
        if x.startswith("--"):
            k = x[2:]
            if k in flags:
                a[k] = True
            elif k in opts and i + 1 < len(argv):
                a[k] = argv[i + 1]
                i += 1
            else:
                sys.exit(f"lance_py.py: bad option {x}\n{USAGE}")
        else:
            rest.append(x)
        i += 1
    return a, rest


def main(argv):
    if not argv:
        sys.exit(USAGE)
    cmd, argv = argv[0], argv[1:]
    if cmd == "make":
        a, rest = parse(argv, ["writer"])
        if a["writer"] not in ("lance13", "lance14"):
            sys.exit(USAGE)
        w = Writer13() if a["writer"] == "lance13" else Writer14()
        for spec in rest:
            kind, _, path = spec.partition("=")
            kind, _, appends = kind.partition(":")
            try:
                t0 = time.time()
                obj = w.make(kind, path, int(appends)) if appends else w.make(kind, path)
                out = {"table": table_name(path), "kind": kind, "writer": w.name, **w.summary(obj),
                       "ms": int((time.time() - t0) * 1000)}
                if not is_remote(path):
                    out["manifest"] = manifest_info(path)
                emit(out)
            except BaseException as e:  # noqa: B036
                if isinstance(e, KeyboardInterrupt):
                    raise
                emit({"table": table_name(path), "kind": kind, "writer": w.name, "error": error_text(e)})
    elif cmd in ("read", "answers"):
        a, rest = parse(argv, ["reader"], ["answers"])
        rd = make_reader(a["reader"])

        def one(p):
            if cmd == "answers":
                return {"reader": rd.name, "answers": answers(rd, p)}
            out = read_table(rd, p)
            out["reader"] = rd.name
            if a["answers"] and rd.indices():
                try:
                    out["answers"] = answers(rd, p)
                except BaseException as e:  # noqa: B036
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    out["answers"] = {"error": error_text(e)}
            return out
        per_table(rest, one)
    elif cmd == "compact":
        a, rest = parse(argv, ["target-rows"], ["defer-index-remap"])
        import lance
        kw = {}
        if a["target-rows"]:
            kw["target_rows_per_fragment"] = int(a["target-rows"])
        if a["defer-index-remap"]:
            kw["defer_index_remap"] = True

        def one(p):
            ds = lance.dataset(p, storage_options=storage_options(p))
            t0 = time.time()
            st = ds.optimize.compact_files(**kw)
            seconds = time.time() - t0
            ds = lance.dataset(p, storage_options=storage_options(p))
            return {"op": "compact_files", "lance": lance.__version__, "seconds": seconds, "version": ds.version,
                    "fragmentsRemoved": st.fragments_removed, "fragmentsAdded": st.fragments_added,
                    "fragments": len(ds.get_fragments())}
        per_table(rest, one)
    elif cmd == "cleanup":
        import lance

        def one(p):
            st = lance.dataset(p, storage_options=storage_options(p)).cleanup_old_versions(
                older_than=timedelta(0), delete_unverified=True)
            return {"op": "cleanup_old_versions", "lance": lance.__version__,
                    "bytesRemoved": st.bytes_removed, "oldVersions": st.old_versions}
        per_table(argv, one)
    elif cmd == "operations":
        import lance

        def one(p):
            ds = lance.dataset(p, storage_options=storage_options(p))
            ops, meta = {}, {}
            for v in ds.versions():
                try:
                    op = ds.read_transaction(v["version"]).operation
                except TypeError as e:  # a Rewrite pylance cannot convert (Reader14.transaction)
                    ops[str(v["version"])] = "(unconvertible: " + str(e)[:60] + ")"
                    continue
                ops[str(v["version"])] = type(op).__name__
                upd = getattr(op, "schema_metadata_updates", None)
                if upd is not None:
                    meta[str(v["version"])] = {"updates": upd.updates, "replace": upd.replace}
            return {"operations": ops, "schema_metadata_updates": meta}
        per_table(argv, one)
    elif cmd == "append":
        w = Writer14()

        def one(p):
            so = storage_options(p)
            ds = w.lance.dataset(p, storage_options=so)
            managed = (ds.schema.metadata or {}).get(b"lance.blob.managed") == b"true"
            for k in range(2):
                w.lance.write_dataset(w.blob_table("deleted", 5000 + 10 * k, 10, False, managed=managed), p,
                                      mode="append", storage_options=so)
            return {"op": "append", "managed": managed, **w.summary(w.lance.dataset(p, storage_options=so))}
        per_table(argv, one)
    elif cmd == "optimize":
        block_pylance()
        import lancedb

        def one(p):
            p = os.path.abspath(p.rstrip("/"))
            t = lancedb.connect(os.path.dirname(p)).open_table(os.path.basename(p)[:-len(".lance")])
            t.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
            return {"op": "optimize", "lancedb": lancedb.__version__, "version": t.version,
                    "fragments": t.stats()["fragment_stats"]["num_fragments"], "manifest": manifest_info(p)}
        per_table(argv, one)
    elif cmd == "manifest":
        per_table(argv, manifest_info)
    else:
        sys.exit(f"lance_py.py: unknown command {cmd}\n{USAGE}")


if __name__ == "__main__":
    main(sys.argv[1:])
