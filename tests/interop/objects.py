# objects.py: the objects of a table on the test object stores, one "KEY SIZE" line
# each, KEY relative to the table (data/x.lance 1234), for the tests and benchmarks that
# count what a compaction wrote; and a table copied object by object on the server, for
# benchmarks that need identical copies.
#
#   python3 tests/interop/objects.py s3://BUCKET/PREFIX/T.lance    (radosgw: AWS_* as
#                                     scripts/s3-server.sh prints them; Debian's boto3)
#   python3 tests/interop/objects.py az://CONTAINER/PREFIX/T.lance (Azurite: AZURE_STORAGE_*
#                                     as scripts/azurite-server.sh prints them; List Blobs
#                                     signed with the account's Shared Key, the standard
#                                     library only)
#   python3 tests/interop/objects.py --copy SRC DST   every object of table SRC to the same
#                                     key below table DST (same store): CopyObject, Copy Blob
import base64
import datetime
import hashlib
import hmac
import os
import sys
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET


def s3_objects(bucket, prefix):
    import boto3
    e = os.environ
    s3 = boto3.client("s3", endpoint_url=e["AWS_ENDPOINT_URL"], region_name=e.get("AWS_REGION", "us-east-1"))
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            yield o["Key"], o["Size"]


def az_request(method, path, query, headers=None):
    """A Shared Key signed request to Azurite (path: /CONTAINER[/BLOB]); the response body."""
    e = os.environ
    account, key = e["AZURE_STORAGE_ACCOUNT_NAME"], base64.b64decode(e["AZURE_STORAGE_ACCOUNT_KEY"])
    endpoint = e["AZURE_STORAGE_ENDPOINT"].rstrip("/")  # http://HOST:PORT/ACCOUNT (path-style, Azurite)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
    h = {"x-ms-date": date, "x-ms-version": "2021-08-06", **(headers or {})}
    canon = "".join(f"{k}:{v}\n" for k, v in sorted(h.items()) if k.startswith("x-ms-"))
    resource = f"/{account}{urllib.parse.urlparse(endpoint).path}{urllib.parse.quote(path)}" + "".join(
        f"\n{k}:{v}" for k, v in sorted(query.items()))
    ctype = "application/octet-stream" if method == "PUT" else ""
    if ctype:
        h["Content-Type"] = ctype
    sts = f"{method}\n\n\n\n\n{ctype}\n" + "\n" * 6 + canon + resource
    sig = base64.b64encode(hmac.new(key, sts.encode(), hashlib.sha256).digest()).decode()
    h["Authorization"] = f"SharedKey {account}:{sig}"
    url = endpoint + urllib.parse.quote(path) + ("?" + urllib.parse.urlencode(query) if query else "")
    data = b"" if method == "PUT" else None
    return urllib.request.urlopen(urllib.request.Request(url, data=data, method=method, headers=h), timeout=30).read()


def az_objects(container, prefix):
    marker = ""
    while True:
        query = {"comp": "list", "prefix": prefix, "restype": "container"}
        if marker:
            query["marker"] = marker
        root = ET.fromstring(az_request("GET", f"/{container}", query))
        for b in root.iter("Blob"):
            yield b.findtext("Name"), int(b.findtext("Properties/Content-Length"))
        marker = root.findtext("NextMarker") or ""
        if not marker:
            return


def split(uri):
    scheme, _, rest = uri.partition("://")
    where, _, table = rest.partition("/")
    if scheme not in ("s3", "az"):
        sys.exit(f"objects.py: {uri}: an s3:// or az:// table")
    return scheme, where, table.rstrip("/") + "/"


def copy(src, dst):
    scheme, where, prefix = split(src)
    _, where2, prefix2 = split(dst)
    listing = s3_objects if scheme == "s3" else az_objects
    if scheme == "s3":
        import boto3
        s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                          region_name=os.environ.get("AWS_REGION", "us-east-1"))
    for k, _ in list(listing(where, prefix)):
        to = prefix2 + k[len(prefix):]
        if scheme == "s3":
            s3.copy_object(Bucket=where2, Key=to, CopySource={"Bucket": where, "Key": k})
        else:
            source = os.environ["AZURE_STORAGE_ENDPOINT"].rstrip("/") + urllib.parse.quote(f"/{where}/{k}")
            az_request("PUT", f"/{where2}/{to}", {}, {"x-ms-copy-source": source})


def main(argv):
    if argv[0] == "--copy":
        return copy(argv[1], argv[2])
    scheme, where, prefix = split(argv[0])
    for k, size in (s3_objects if scheme == "s3" else az_objects)(where, prefix):
        print(k[len(prefix):], size)


if __name__ == "__main__":
    main(sys.argv[1:])
