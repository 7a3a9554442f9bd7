"""pbwire.py: the protobuf wire format by hand, for brid's test tools that read
or rewrite Lance's manifests without protobuf packages (tests/corpus/forward_manifest.py,
tests/interop/lance_py.py). A message is a list of (field, wire type, value): an int for
a varint, the raw bytes otherwise, in the order of the encoding."""


def varint(v):
    b = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        b.append(byte | (0x80 if v else 0))
        if not v:
            return bytes(b)


def read_varint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def parse(buf):
    """[(field, wire, value)]: value is an int (varint) or bytes."""
    out, pos = [], 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, pos = read_varint(buf, pos)
        elif wire == 2:
            n, pos = read_varint(buf, pos)
            v, pos = bytes(buf[pos:pos + n]), pos + n
        elif wire == 1:
            v, pos = bytes(buf[pos:pos + 8]), pos + 8
        elif wire == 5:
            v, pos = bytes(buf[pos:pos + 4]), pos + 4
        else:
            raise ValueError(f"wire type {wire} (a group) in the input")
        out.append((field, wire, v))
    return out


def encode(fields):
    b = bytearray()
    for field, wire, v in fields:
        b += varint(field << 3 | wire)
        if wire == 0:
            b += varint(v)
        elif wire == 2:
            b += varint(len(v)) + v
        else:
            b += v
    return bytes(b)
