#!/usr/bin/env python3
"""Writes the damaged-manifest corpus (tests/corpus/manifests/) from a real
Lance 12 manifest. Run once; the output is committed. Each file is named for
the damage it carries; tests/cli/test_damaged_manifests.sh feeds every one to
`brictl inspect` and expects exit status 2 and a message naming the file.

    python3 tests/corpus/make_damaged_manifests.py SRC.manifest OUTDIR
"""
import os
import random
import struct
import sys

from forward_manifest import varint  # this directory is on sys.path

src, out = sys.argv[1], sys.argv[2]
base = open(src, "rb").read()
n = len(base)
pos = struct.unpack_from("<Q", base, n - 16)[0]
mlen = struct.unpack_from("<I", base, pos)[0]
os.makedirs(out, exist_ok=True)


def write(name, data):
    with open(os.path.join(out, name + ".manifest"), "wb") as f:
        f.write(data)


def append_fields(extra):
    """Appends raw fields to the Manifest message (last value wins)."""
    msg = base[pos + 4:pos + 4 + mlen] + extra
    return base[:pos] + struct.pack("<I", len(msg)) + msg + base[n - 16:]


for cut in (0, 1, 4, 15, 16, 17, pos // 2, pos, pos + 4, pos + 5, n // 2, n - 17, n - 16, n - 5, n - 1):
    write("truncated-%d" % cut, base[:cut])
write("bad-magic", base[:-4] + b"LANX")
write("position-past-end", base[:-16] + struct.pack("<Q", n + 1000) + base[-8:])
write("position-huge", base[:-16] + struct.pack("<Q", 2**64 - 1) + base[-8:])
write("length-past-end", base[:pos] + struct.pack("<I", mlen + 1) + base[pos + 4:])
write("first-section-length-past-end", struct.pack("<I", 0xFFFFFF00) + base[4:])
wrong = bytearray(base)
wrong[pos + 4] = 0x08  # field 1 (fields, length-delimited) as a varint
write("wrong-wire-type", bytes(wrong))
group = bytearray(base)
group[pos + 4] = 0x0B  # field 1 with the group wire type
write("group-wire-type", bytes(group))
write("flag-unknown-reader-bit50", append_fields(b"\x48" + varint(1 << 50)))
write("flag-overlay-64", append_fields(b"\x48" + varint(64) + b"\x50" + varint(64)))
write("flag-bri-without-bri", append_fields(b"\x48" + varint(1 << 40) + b"\x50" + varint(1 << 40)))
write("flag-bri-reader-only", append_fields(b"\x48" + varint(1 << 40)))
write("version-zero", append_fields(b"\x18\x00"))
rng = random.Random(7)
write("random-garbage", bytes(rng.randrange(256) for _ in range(n)))
write("random-with-tail", bytes(rng.randrange(256) for _ in range(n - 16)) + base[-16:])
