#!/usr/bin/env python3
"""Import cycles between the modules of each crate.

A module is a file under a crate's src/ (`a.rs` or `a/mod.rs` is `a`,
`a/b.rs` is `a::b`). Module A imports module B when A's code names
`crate::B...` (in a `use`, a `use crate::{..}` group or a path) or
`super::...` from a file below B; the longest module path that matches
counts. A cycle is a set of modules that reach each other by imports (a
strongly connected component of more than one module). Comments and a
file's inline `mod tests` count as the file's code too: a test module that
imports a module importing its file back is a cycle as well.

    usage: scripts/module-cycles.py [CRATE_SRC ...]
           (default: host/src kernels-gpu/src xtask/src tests/src builder/src)

Prints each crate's module and import counts and every cycle; exits 1 if
any crate has one.
"""
import re
import sys
from pathlib import Path

DEFAULT = ["host/src", "kernels-gpu/src", "xtask/src", "tests/src", "builder/src"]


def modules(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    out = {}
    for f in sorted(src.rglob("*.rs")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
            parts = parts[:-1]
        out[tuple(parts)] = f
    return out


def code(text):
    """The text without comments and string literals (roughly: enough to find paths)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def expand(text):
    """Every `crate::a::b` path named, `use crate::{a, b::{c}}` groups expanded."""
    paths = []
    for m in re.finditer(r"\bcrate::((?:\w+::)*)\{", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        inner = text[m.end() : i - 1]
        prefix = m.group(1)
        for item in re.split(r",(?![^{]*\})", inner):
            item = item.strip()
            if item:
                paths.extend(expand("crate::" + prefix + item) or ["crate::" + prefix + re.split(r"[\s{]", item)[0]])
    for m in re.finditer(r"\bcrate((?:::\w+)+)", text):
        paths.append("crate" + m.group(1))
    return paths


def resolve(path, mods):
    """The longest module that `crate::...` path names, or None."""
    parts = path.split("::")[1:]
    for n in range(len(parts), 0, -1):
        if tuple(parts[:n]) in mods:
            return tuple(parts[:n])
    return None


def edges(mods):
    graph = {m: set() for m in mods}
    for mod, f in mods.items():
        text = code(f.read_text())
        # `super::x` at the top level of a file names its parent's x.
        parent = "::".join(("crate",) + mod[:-1])
        text = re.sub(r"(?m)^use super::", f"use {parent}::", text)
        for path in expand(text):
            target = resolve(path, mods)
            if target is not None and target != mod and target != ():
                graph[mod].add(target)
    return graph


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def name(mod):
    return "::".join(mod) or "crate"


def main():
    roots = sys.argv[1:] or DEFAULT
    found = False
    for root in roots:
        src = Path(root)
        if not src.is_dir():
            print(f"{root}: not a directory")
            found = True
            continue
        mods = modules(src)
        graph = edges(mods)
        comps = cycles(graph)
        imports = sum(len(v) for v in graph.values())
        print(f"{root}: {len(mods)} modules, {imports} imports, {len(comps)} cycle(s)")
        for comp in comps:
            found = True
            members = set(comp)
            links = [f"{name(a)} -> {name(b)}" for a in comp for b in sorted(graph[a]) if b in members]
            print(f"  cycle: {', '.join(name(m) for m in comp)}")
            print(f"    {'; '.join(links)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
