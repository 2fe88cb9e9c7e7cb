"""The package's import graph from ``ast``: modules, layers, imports, upward imports, cycles.

Run it on any source tree to re-derive the numbers::

    python tests/import_graph.py                 # this tree
    python tests/import_graph.py --src /tmp/old/src --edges

Every ``import`` and ``from ... import`` is read (top level, inside functions and
under ``TYPE_CHECKING`` alike: a lazy import is still a dependency). An import
of a package resolves to its ``__init__.py``; ``from pkg import name`` resolves
to the module ``pkg/name.py`` when there is one. Counted:

- modules: ``.py`` files under ``rlvr_boundary/``;
- layers: the floors of :data:`FLOORS` that hold at least one module;
- imports: distinct (module, module) pairs inside the package;
- upward imports: pairs whose target stands on a higher floor than the importer;
- cycles: strongly connected sets of two or more modules (files that import each
  other in a loop), and the same at the level of the top-level packages.

``tests/test_layering.py`` asserts on these numbers.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: The floor of every top-level package or module of rlvr_boundary, ground first.
#: Dependencies point down: a module may import its own floor's or lower floors' modules.
FLOORS: dict[str, int] = {
    # leaves: import nothing of the package above them
    "errors": 0, "_version": 0, "console": 0, "examples": 0, "__init__": 0,
    "options": 0,                   # options declared once (flags, help, bounds)
    "kinds": 0,                     # the registry of result kinds

    "core": 1,                      # numpy and scipy only
    "theory": 2, "shaping": 2,      # on the core
    "analysis": 3,                  # aligned counts -> JSON-ready numbers
    "io": 4,                        # readers, writers, adapters: no computing
    "report": 6, "backends": 6, "verify": 6,
    "pipelines": 7,                 # load -> compute -> write, one module per workflow
    "monitor": 8,                   # the boundary monitor during training, over the pipelines
    "lab": 8,                       # experiments over the pipelines (and the monitor)
    "commands": 9, "app": 9,        # parse -> pipeline -> write -> render
    "cli": 10,
}

#: Package pairs that must not import each other although the floors allow it: packages
#: apart on one floor, and io, which reads and converts but never computes.
FORBIDDEN = {("report", "verify"), ("report", "backends"), ("verify", "report"),
             ("verify", "backends"), ("backends", "report"), ("app", "commands"),
             ("theory", "shaping"), ("shaping", "theory"), ("io", "analysis"),
             ("monitor", "lab")}


def modules(src: Path = SRC) -> list[Path]:
    root = src / "rlvr_boundary"
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path, src: Path = SRC) -> str:
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_of(name: str) -> str:
    """Top-level package (or module) of a dotted name inside rlvr_boundary."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def raw_imports(path: Path, src: Path = SRC) -> list[tuple[int, str, list[str]]]:
    """(line, dotted module, names imported from it) of every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path, src)
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod, [a.name for a in node.names]))
    return out


def graph(src: Path = SRC) -> dict[str, dict[str, int]]:
    """``{module: {imported module: first line}}`` over the package's own modules."""
    files = modules(src)
    known = {module_name(p, src) for p in files}
    edges: dict[str, dict[str, int]] = {module_name(p, src): {} for p in files}
    for p in files:
        me = module_name(p, src)
        for line, mod, names in raw_imports(p, src):
            if mod.split(".")[0] != "rlvr_boundary":
                continue
            targets = [f"{mod}.{n}" for n in names if f"{mod}.{n}" in known]
            if len(targets) < len(names) or not names:
                # names that are not modules come from the module itself
                m = mod
                while m and m not in known:
                    m = m.rsplit(".", 1)[0] if "." in m else ""
                if m:
                    targets.append(m)
            for t in targets:
                if t != me:
                    edges[me].setdefault(t, line)
    return edges


def floor_of(name: str) -> int:
    pkg = package_of(name)
    if pkg not in FLOORS:
        raise KeyError(f"{name}: the package '{pkg}' has no floor in FLOORS")
    return FLOORS[pkg]


def upward(edges: dict[str, dict[str, int]]) -> list[str]:
    """Imports from a lower floor to a higher one."""
    return sorted(f"{a}:{line} imports {b} (floor {floor_of(a)} -> {floor_of(b)})"
                  for a, targets in edges.items() for b, line in targets.items()
                  if floor_of(b) > floor_of(a))


def forbidden(edges: dict[str, dict[str, int]]) -> list[str]:
    """Imports between the :data:`FORBIDDEN` package pairs."""
    return sorted(f"{a}:{line} imports {b} ({package_of(a)} must not import {package_of(b)})"
                  for a, targets in edges.items() for b, line in targets.items()
                  if (package_of(a), package_of(b)) in FORBIDDEN)


def cycles(edges: dict[str, set | dict]) -> list[list[str]]:
    """Strongly connected sets of two or more nodes (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        # iterative Tarjan: (node, iterator over its targets)
        work = [(v, iter(edges.get(v, ())))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def package_edges(edges: dict[str, dict[str, int]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for a, targets in edges.items():
        for b in targets:
            if package_of(a) != package_of(b):
                out[package_of(a)].add(package_of(b))
    return out


def summary(src: Path = SRC) -> dict:
    edges = graph(src)
    used = {floor_of(m) for m in edges}
    return {"modules": len(edges), "layers": len(used),
            "imports": sum(len(t) for t in edges.values()),
            "imports between packages": sum(package_of(a) != package_of(b)
                                            for a, t in edges.items() for b in t),
            "upward imports": upward(edges), "forbidden imports": forbidden(edges),
            "module cycles": cycles(edges),
            "package cycles": cycles(package_edges(edges))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=SRC, help="folder holding rlvr_boundary/")
    ap.add_argument("--edges", action="store_true",
                    help="also list every upward and forbidden import")
    args = ap.parse_args()
    s = summary(args.src.resolve())
    for key in ("modules", "layers", "imports", "imports between packages"):
        print(f"{key}: {s[key]}")
    for key in ("upward imports", "forbidden imports"):
        print(f"{key}: {len(s[key])}")
        if args.edges:
            for e in s[key]:
                print(f"  {e}")
    print(f"module cycles: {len(s['module cycles'])}")
    for c in s["module cycles"]:
        print(f"  {' <-> '.join(c)}")
    print(f"package cycles: {len(s['package cycles'])}")
    for c in s["package cycles"]:
        print(f"  {' <-> '.join(c)}")


if __name__ == "__main__":
    main()
