"""The `pub` items of each library crate that no other crate names: each is either returned by
something public (a caller holds it without naming it) or should be `pub(crate)`. Run from the
repository root; prints `path:line kind name`.

`unreachable_pub` watches items of private modules; this watches the table and stage modules
that stay public as namespaces (`schema::workouts::list`)."""
import os
import re
import sys

CRATES = ["schema", "queue", "rules", "ingest", "api", "webhooks", "vendors"]
ITEM = re.compile(
    r"^[ \t]*pub (?:async )?(?:const )?(?:unsafe )?(fn|struct|enum|const|static|type|trait) (\w+)",
    re.M,
)


def rust_files(top):
    for path, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("target", ".git", "node_modules", "portal")]
        for f in files:
            if f.endswith(".rs"):
                yield os.path.join(path, f)


def main():
    texts = {f: open(f, encoding="utf-8").read() for f in rust_files(".")}
    found = 0
    for crate in CRATES:
        src = f"./{crate}/src/"
        words = set()
        for f, t in texts.items():
            if not f.startswith(src):
                words.update(re.findall(r"\w+", t))
        for f, t in sorted(texts.items()):
            if not f.startswith(src):
                continue
            for m in ITEM.finditer(t):
                if m.group(2) not in words:
                    line = t[: m.start()].count("\n") + 1
                    print(f"{f[2:]}:{line} {m.group(1)} {m.group(2)}")
                    found += 1
    print(f"{found} public items no other crate names", file=sys.stderr)


if __name__ == "__main__":
    main()
