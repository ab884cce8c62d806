#!/usr/bin/env python3
"""The file-level call graph of brig, drawn from a build's object files.

Each object's defined symbols (nm: T, D, B, R) map a function or variable to
its source file; each undefined symbol (U) is a call or reference to the file
that defines it. From that: the file graph, its cycles (strongly connected
components of more than one file), pairs of files that call each other, and
the folder graph (runtime/lib/<folder>/, "lib" for the shared files at
runtime/lib/, "commands" for runtime/commands/ and runtime/*.c).

  contrib/callgraph.py BUILDDIR            summary: cycles, mutual pairs, folder edges
  contrib/callgraph.py BUILDDIR --check    exit 1 on any file cycle or a folder edge
                                           against the layering (LAYERS below)
  contrib/callgraph.py BUILDDIR --edges    every file edge, one "from -> to (symbols)" a line
"""
import os
import subprocess
import sys

# Folder layers, top first: a folder may call folders of a later layer, and
# peers of its own layer as long as the folder graph stays without cycles.
LAYERS = [
    ["commands"],
    ["serve"],
    ["sandbox"],
    ["container"],
    ["process", "rootfs", "seccomp", "cgroup"],
    ["lib"],
    ["libocispec"],
]


def source_of(obj, builddir):
    rel = os.path.relpath(obj, builddir)
    d, base = os.path.split(rel)
    base = base[:-2]
    # automake's per-target prefix: libbrig_a-foo.o, brig-foo.o, libocispec_a-foo.o
    if "-" in base:
        base = base.split("-", 1)[1]
    return os.path.join(d, base + ".c")


def folder_of(src):
    parts = src.split("/")
    if parts[0] == "libocispec":
        return "libocispec"
    if parts[0] != "runtime":
        return None
    if parts[1] == "lib":
        return parts[2] if len(parts) > 3 else "lib"
    return "commands"


def srcdir_of(builddir):
    """The build's source tree (the Makefile's abs_top_srcdir), else ours."""
    try:
        with open(os.path.join(builddir, "Makefile")) as f:
            for line in f:
                if line.startswith("abs_top_srcdir = "):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(builddir):
    srcdir = srcdir_of(builddir)
    objs = []
    for top in ("runtime", "libocispec"):
        for root, _, files in os.walk(os.path.join(builddir, top)):
            objs += [os.path.join(root, f) for f in files if f.endswith(".o")]
    defs, uses = {}, {}
    for o in sorted(objs):
        src = source_of(o, builddir)
        if not os.path.exists(os.path.join(srcdir, src)):
            continue  # a stale object of a file since moved or removed
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        uses[src] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == "U":
                uses[src].add(f[1])
            elif len(f) == 3 and f[1] in "TDBRVW":
                defs.setdefault(f[2], src)
    edges = {}
    for src, syms in uses.items():
        for s in syms:
            dst = defs.get(s)
            if dst and dst != src:
                edges.setdefault((src, dst), set()).add(s)
    return set(uses), edges


def sccs(nodes, adj):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        work = [(v, iter(adj.get(v, ())))]
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        while work:
            u, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(adj.get(w, ()))))
                    break
                if w in on:
                    low[u] = min(low[u], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[u])
                if low[u] == index[u]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == u:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    builddir = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else ""
    nodes, edges = load(builddir)
    if mode == "--edges":
        for (a, b), s in sorted(edges.items()):
            print(f"{a} -> {b} ({', '.join(sorted(s))})")
        return 0
    adj = {}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
    comps = sccs(nodes, adj)
    mutual = sorted((a, b) for (a, b) in edges if a < b and (b, a) in edges)
    rank = {f: i for i, layer in enumerate(LAYERS) for f in layer}
    fedges, bad = {}, []
    for (a, b), s in edges.items():
        fa, fb = folder_of(a), folder_of(b)
        if fa is None or fb is None or fa == fb:
            continue
        fedges.setdefault((fa, fb), []).append(f"{a} -> {b} ({', '.join(sorted(s))})")
        if fa not in rank or fb not in rank or rank[fa] > rank[fb]:
            bad.append((fa, fb))
    fadj = {}
    for fa, fb in fedges:
        fadj.setdefault(fa, set()).add(fb)
    fcomps = sccs(set(fadj) | {b for s in fadj.values() for b in s}, fadj)
    for c in fcomps:
        for fa in c:
            for fb in fadj.get(fa, ()):
                if fb in c and (fa, fb) not in bad:
                    bad.append((fa, fb))
    print(f"files: {len(nodes)}, file edges: {len(edges)}")
    print(f"file cycles (strongly connected groups): {len(comps)}, files in them: "
          f"{sum(len(c) for c in comps)}, mutually calling pairs: {len(mutual)}")
    for c in comps:
        print("  cycle: " + " ".join(c))
    for a, b in mutual:
        print(f"  mutual: {a} <-> {b}")
    print(f"folder cycles: {len(fcomps)}" + "".join("\n  folder cycle: " + " ".join(c) for c in fcomps))
    print("folder edges:")
    for (fa, fb), lst in sorted(fedges.items()):
        flag = "  AGAINST THE LAYERS" if (fa, fb) in bad else ""
        print(f"  {fa} -> {fb}: {len(lst)}{flag}")
        if flag:
            for e in sorted(lst):
                print(f"      {e}")
    if mode == "--check" and (comps or fcomps or bad):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
