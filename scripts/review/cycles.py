"""Module cycles inside one crate, file by file: a `crate::` or `super::` path is an edge to the
module it names, and a parent's `pub use child::{..}` re-export resolves to the child. Tests
(`#[cfg(test)] mod tests`) and comments are left out. Usage: cycles.py CRATE/src."""
import glob
import os
import re
import sys


def module_of(path):
    name = path[:-3]
    if name.endswith("/mod"):
        name = name[:-4]
    return "" if name == "lib" else name.replace("/", "::")


def code_of(path):
    text = re.sub(r"//[^\n]*", "", open(path, encoding="utf-8").read())
    return re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)


def reexports(modules):
    """(module, name) -> the module a name is re-exported from."""
    out = {}
    use = r"pub(?:\(crate\))? use (?:self::|crate::)?((?:\w+::)+)"
    for module, path in modules.items():
        code = code_of(path)
        for prefix, names in re.findall(use + r"\{([^}]*)\}", code):
            for name in filter(None, (n.strip() for n in names.split(","))):
                out[(module, name.split(" as ")[-1].strip())] = prefix.rstrip(":")
        for prefix, name in re.findall(use + r"(\w+);", code):
            out[(module, name)] = prefix.rstrip(":")
    return out


def resolve(modules, reexported, parts):
    for i in range(len(parts), 0, -1):
        candidate = "::".join(parts[:i])
        if candidate not in modules:
            continue
        rest = parts[i:]
        if rest and (candidate, rest[0]) in reexported:
            source = reexported[(candidate, rest[0])]
            full = f"{candidate}::{source}" if candidate else source
            if full in modules:
                return full
        return candidate
    return None


def edges(modules):
    reexported = reexports(modules)
    graph = {}
    for module, path in modules.items():
        code = code_of(path)
        if path.endswith(("mod.rs", "lib.rs")):
            code = re.sub(r"pub(?:\(crate\))? use [^;]*;", "", code)
        paths = []
        for kind, rest in re.findall(r"\b(crate|super)::((?:\w+::)*\w+)", code):
            paths.append((kind, rest))
        for kind, prefix, names in re.findall(r"\b(crate|super)::((?:\w+::)*)\{([^}]*)\}", code):
            for name in names.split(","):
                head = re.match(r"[\w:]+", name.strip())
                if head:
                    paths.append((kind, prefix + head.group(0)))
        deps = set()
        for kind, rest in paths:
            base = [] if kind == "crate" else module.split("::")[:-1]
            target = resolve(modules, reexported, base + rest.split("::"))
            if target is not None and target != module:
                deps.add(target)
        graph[module] = deps
    return graph


def cycles(graph):
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return found


def main():
    top = sys.argv[1]
    os.chdir(top)
    modules = {module_of(p): p for p in glob.glob("**/*.rs", recursive=True)}
    graph = edges(modules)
    found = cycles(graph)
    print(f"{top}: {len(found)} cycles")
    for component in found:
        print("  " + ", ".join(m or "lib" for m in component))
        for m in component:
            print(f"    {m or 'lib'} -> {sorted(graph[m] & set(component))}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
