"""Writes an archive the way a phone, a Mac or a streaming zipper writes one, for the import tests.

    python3 zip_export.py OUT [--zip64] ENTRY...

OUT is a file (seekable: sizes in each local header) or `-` for standard output (a pipe: not
seekable, so every entry's sizes follow its data in a data descriptor, as macOS Archive Utility
and streaming zippers write them). Each ENTRY is `deflate:NAME=PATH`, `store:NAME=PATH` or
`dir:NAME/`, in archive order. --zip64 writes every file entry with zip64 sizes.
"""

import shutil
import sys
import zipfile

args = sys.argv[1:]
out = args.pop(0)
zip64 = "--zip64" in args
entries = [a for a in args if a != "--zip64"]
target = sys.stdout.buffer if out == "-" else open(out, "wb")
with zipfile.ZipFile(target, "w") as z:
    for entry in entries:
        method, rest = entry.split(":", 1)
        if method == "dir":
            z.writestr(zipfile.ZipInfo(rest, date_time=(2024, 1, 2, 8, 0, 0)), b"")
            continue
        name, path = rest.split("=", 1)
        info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 8, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED if method == "deflate" else zipfile.ZIP_STORED
        with open(path, "rb") as src, z.open(info, "w", force_zip64=zip64) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
target.flush()
