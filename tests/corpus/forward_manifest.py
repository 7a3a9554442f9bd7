#!/usr/bin/env python3
"""Rewrites a table's latest manifest into what a newer Lance might write,
for tests/cli/test_forward_compat.sh (docs/format/compatibility.md).

    python3 tests/corpus/forward_manifest.py TABLE CASE
    python3 tests/corpus/forward_manifest.py --has TABLE CASE   (exit 0: present, 1: absent, 2: no probe)

CASE is one of the names in CASES below, or extra-global-buffer or
column-foreign (which also rewrite a data file). The manifest file keeps Lance's
layout ([u32 len][IndexSection] [u32 len][Transaction] [u32 len][Manifest],
then [u64 manifest_pos][u16 0][u16 2]"LANC"); the sections are laid out
again and the Manifest's index_section (6) and transaction pointers (21,
which Lance 12 and 13 write, and 23, which Lance 14 writes; whichever the
manifest has) follow them. Protobuf is handled by hand (no packages needed): a
message is a list of (field, wire type, raw value), unknown fields are
appended after the known ones as a newer writer would.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pbwire import encode, parse  # noqa: E402  (tests/pbwire.py)


def get(fields, num, default=None):
    for f, _, v in fields:
        if f == num:
            return v
    return default


def put(fields, num, wire, v):
    """Sets a singular field (replacing it), keeping the field order."""
    for i, (f, _, _) in enumerate(fields):
        if f == num:
            fields[i] = (num, wire, v)
            return
    fields.append((num, wire, v))


def edit_nth(fields, num, fn, n=0):
    """Applies fn to the n-th sub-message of field num."""
    seen = 0
    for i, (f, w, v) in enumerate(fields):
        if f == num and w == 2:
            if seen == n:
                sub = parse(v)
                fn(sub)
                fields[i] = (f, w, encode(sub))
                return
            seen += 1
    raise SystemExit("no field %d #%d to edit" % (num, n))


VARINT = (99, 0, 7)
LENGTH = (98, 2, b"newer lance")


def add(field):
    return lambda msg: msg.append(field)


def in_fragment(fn):
    return lambda m, sections: edit_nth(m, 2, fn)


def in_datafile(fn):
    return lambda m, sections: edit_nth(m, 2, lambda frag: edit_nth(frag, 2, fn))


def in_deletion(fn):
    def go(m, sections):
        for i, (f, w, v) in enumerate(m):
            if f == 2 and get(parse(v), 3) is not None:
                frag = parse(v)
                edit_nth(frag, 3, fn)
                m[i] = (f, w, encode(frag))
                return
        raise SystemExit("no fragment with a deletion file")
    return go


def in_index(fn):
    def go(m, sections):
        if sections["idx"] is None:
            raise SystemExit("the manifest has no index section")
        idx = parse(sections["idx"])
        edit_nth(idx, 1, fn)
        sections["idx"] = encode(idx)
    return go


def in_fri(fn):
    def go(m, sections):
        idx = parse(sections["idx"] or b"")
        for i, (f, w, v) in enumerate(idx):
            if f == 1 and get(parse(v), 3) == b"__lance_frag_reuse":
                x = parse(v)
                fn(x)
                idx[i] = (f, w, encode(x))
                sections["idx"] = encode(idx)
                return
        raise SystemExit("no fragment reuse index")
    return go


def flags(reader, writer):
    def go(m, sections):
        put(m, 9, 0, get(m, 9, 0) | reader)
        put(m, 10, 0, get(m, 10, 0) | writer)
    return go


def pointer(m, sections):
    """A varint field unknown to brid holding the transaction section's
    offset, as a later Lance might move a pointer again. Filled in by
    write() once the layout is known."""
    m.append((97, 0, "txn-offset"))


def tree_unflagged(m, sections):
    """Lance 14's fragment tree (Manifest field 22) in place of the list."""
    m[:] = [f for f in m if f[0] != 2]
    m.append((22, 2, encode([(1, 2, encode([(2, 2, b"0123456789abcdef")]))])))


def tree(m, sections):
    tree_unflagged(m, sections)
    flags(1 << 12, 1 << 12)(m, sections)


def extra_global_buffer(m, sections, table):
    """Gives the first fragment's first data file a second global buffer
    (the zone-map seeds newer Lance writes) and fixes its size in the
    manifest. Footer: column_meta_start, cmo_table_start, gbo_table_start
    (u64 each), num_global_buffers, num_columns (u32), major, minor (u16),
    "LANC"; global buffers sit before the column metadata."""
    def fix(df):
        path = os.path.join(table, "data", get(df, 1).decode())
        b = bytearray(open(path, "rb").read())
        cm, cmo, gbo, ngb, ncol = struct.unpack_from("<QQQII", b, len(b) - 40)
        at = (cm + 63) // 64 * 64
        new = b"\x5a" * 64
        grow = at - cm + len(new)
        cmo_table = bytearray(b[cmo:cmo + 16 * ncol])
        for c in range(ncol):
            pos, size = struct.unpack_from("<QQ", cmo_table, 16 * c)
            struct.pack_into("<QQ", cmo_table, 16 * c, pos + grow, size)
        gbo_table = b[gbo:gbo + 16 * ngb] + struct.pack("<QQ", at, len(new))
        tail = b[len(b) - 8:]
        out = (b[:cm] + b"\0" * (at - cm) + new + b[cm:cmo] + cmo_table + b[cmo + 16 * ncol:gbo] +
               gbo_table + struct.pack("<QQQII", cm + grow, cmo + grow, gbo + grow, ngb + 1, ncol) + tail)
        open(path, "wb").write(out)
        put(df, 6, 0, len(out))
    edit_nth(m, 2, lambda frag: edit_nth(frag, 2, fix))


def no_deletions(m, sections):
    """Drops every deletion file (and the flag): fragments page copy can take."""
    for i, (f, w, v) in enumerate(m):
        if f == 2:
            m[i] = (f, w, encode([x for x in parse(v) if x[0] != 3]))
    put(m, 9, 0, get(m, 9, 0) & ~1)
    put(m, 10, 0, get(m, 10, 0) & ~1)


def column_foreign(m, sections, table):
    """no_deletions, and the first data file's column 0 metadata gets a
    varint field 99: brid must re-encode that column, not copy its pages."""
    no_deletions(m, sections)

    def fix(df):
        path = os.path.join(table, "data", get(df, 1).decode())
        b = bytearray(open(path, "rb").read())
        cm, cmo, gbo, ngb, ncol = struct.unpack_from("<QQQII", b, len(b) - 40)
        extra = bytes([99 << 3 & 0x7F | 0x80, 99 >> 4, 7])
        pos0, size0 = struct.unpack_from("<QQ", b, cmo)
        cut = pos0 + size0
        table_ = bytearray(b[cmo:cmo + 16 * ncol])
        for c in range(ncol):
            pos, size = struct.unpack_from("<QQ", table_, 16 * c)
            struct.pack_into("<QQ", table_, 16 * c, pos + (3 if pos > pos0 else 0), size + (3 if c == 0 else 0))
        out = (b[:cut] + extra + b[cut:cmo] + table_ + b[cmo + 16 * ncol:len(b) - 40] +
               struct.pack("<QQQII", cm, cmo + 3, gbo + 3, ngb, ncol) + b[len(b) - 8:])
        open(path, "wb").write(out)
        put(df, 6, 0, len(out))
    edit_nth(m, 2, lambda frag: edit_nth(frag, 2, fix))


CASES = {
    "manifest-varint": lambda m, s: m.append(VARINT),
    "manifest-ld": lambda m, s: m.append(LENGTH),
    "fragment-varint": in_fragment(add(VARINT)),
    "fragment-ld": in_fragment(add(LENGTH)),
    "datafile-varint": in_datafile(add(VARINT)),
    "datafile-ld": in_datafile(add(LENGTH)),
    "datafile-hint8": in_datafile(add((8, 0, 4242))),
    "deletion-varint": in_deletion(add(VARINT)),
    "index-varint": in_index(add(VARINT)),
    "index-ld": in_index(add(LENGTH)),
    "fri-varint": in_fri(add(VARINT)),
    "pointer": pointer,
    "no-deletions": no_deletions,
    "flag-mixed-both": flags(1 << 8, 1 << 8),
    "flag-mixed-reader-only": flags(1 << 8, 0),
    "flag-managed-both": flags(1 << 14, 1 << 14),
    "flag-managed-writer-only": flags(0, 1 << 14),
    "flag-fragment-tree": flags(1 << 12, 1 << 12),
    "tree": tree,
    "tree-unflagged": tree_unflagged,
}


def fragments(m):
    return [parse(v) for f, _, v in m if f == 2]


def datafiles(m):
    return [parse(v) for frag in fragments(m) for f, _, v in frag if f == 2]


def indices(sections):
    return [parse(v) for f, _, v in parse(sections["idx"] or b"") if f == 1]


def flags_both(bit):
    return lambda m, s: get(m, 9, 0) & bit and get(m, 10, 0) & bit


# --has CASE: is the case's field (or flag) in the latest manifest?
PROBES = {
    "manifest-varint": lambda m, s: VARINT in m,
    "manifest-ld": lambda m, s: LENGTH in m,
    "pointer": lambda m, s: any(f == 97 for f, _, _ in m),
    "fragment-varint": lambda m, s: any(VARINT in f for f in fragments(m)),
    "datafile-varint": lambda m, s: any(VARINT in d for d in datafiles(m)),
    "datafile-ld": lambda m, s: any(LENGTH in d for d in datafiles(m)),
    "fragment-ld": lambda m, s: any(LENGTH in f for f in fragments(m)),
    "datafile-hint8": lambda m, s: any((8, 0, 4242) in d for d in datafiles(m)),
    "deletion-varint": lambda m, s: any(VARINT in parse(v) for fr in fragments(m) for f, _, v in fr if f == 3),
    "index-varint": lambda m, s: any(VARINT in x for x in indices(s)),
    "flag-mixed-both": flags_both(1 << 8),
    "flag-managed-both": flags_both(1 << 14),
}


def latest_manifest(table):
    vdir = os.path.join(table, "_versions")
    names = [n for n in os.listdir(vdir) if n.endswith(".manifest")]
    # v2 naming counts down from 2^64-1, v1 counts up: the newest version is
    # the smallest v2 name or the largest v1 number
    nums = sorted(int(n.split(".")[0]) for n in names)
    v2 = nums and nums[0] > 2**63
    name = ("%020d.manifest" % nums[0]) if v2 else ("%d.manifest" % nums[-1])
    return os.path.join(vdir, name)


def main():
    probe = sys.argv[1] == "--has"
    table, case = sys.argv[1 + probe], sys.argv[2 + probe]
    path = latest_manifest(table)
    buf = open(path, "rb").read()
    pos = struct.unpack_from("<Q", buf, len(buf) - 16)[0]
    mlen = struct.unpack_from("<I", buf, pos)[0]
    m = parse(buf[pos + 4:pos + 4 + mlen])

    def section(num):
        off = get(m, num)
        if off is None:
            return None
        n = struct.unpack_from("<I", buf, off)[0]
        return buf[off + 4:off + 4 + n]

    txn_field = 23 if get(m, 23) is not None else 21
    sections = {"idx": section(6), "txn": section(txn_field)}
    if probe:  # 2: no probe for this case
        sys.exit(2 if case not in PROBES else 0 if PROBES[case](m, sections) else 1)
    if case == "extra-global-buffer":
        extra_global_buffer(m, sections, table)
    elif case == "column-foreign":
        column_foreign(m, sections, table)
    else:
        CASES[case](m, sections)
    out = bytearray()
    if sections["idx"] is not None:
        put(m, 6, 0, len(out))
        out += struct.pack("<I", len(sections["idx"])) + sections["idx"]
    if sections["txn"] is not None:
        for num in (21, 23):
            if get(m, num) is not None or num == txn_field:
                put(m, num, 0, len(out))
        out += struct.pack("<I", len(sections["txn"])) + sections["txn"]
    txn_off = get(m, txn_field, 0)
    m = [(f, w_, txn_off if v == "txn-offset" else v) for f, w_, v in m]
    body = encode(m)
    mpos = len(out)
    out += struct.pack("<I", len(body)) + body
    out += struct.pack("<QHH", mpos, 0, 2) + b"LANC"
    with open(path, "wb") as f:
        f.write(out)
    print(path)


if __name__ == "__main__":
    main()
