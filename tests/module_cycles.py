#!/usr/bin/env python3
"""No import cycle between the modules of `src/` (the library crate).

A module uses another when its code names an item of it: a path from
`crate::`, `super::`, `self::` or a child module's name, in a `use` tree or
in code. A name reached through a `use` (a re-export such as `pub use
child::Thing`, or a private import a child reaches through `super::`) counts
as a use of the module that defines it, as rustc resolves it. A module's
`#[cfg(test)]` blocks are left out: they test the module from inside.

Prints every cycle (the modules of each strongly connected component, and one
cycle through them) and exits 1; exits 0 when the graph is acyclic.

Usage: python3 tests/module_cycles.py [SRC_DIR]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments_and_strings(text: str) -> str:
    """Blanks comments, string and char literals (keeping newlines)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def drop_test_blocks(text: str) -> str:
    """Removes items under `#[cfg(test)]` (test modules and test-only items)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*", text)
        if not m:
            return text
        j = m.end()
        # The item ends at its matching brace, or at a `;` before any brace.
        brace, semi = text.find("{", j), text.find(";", j)
        if semi >= 0 and (brace < 0 or semi < brace):
            end = semi
        else:
            end = matching_brace(text, brace)
        text = text[: m.start()] + text[end + 1 :]


class Module:
    def __init__(self, path: tuple[str, ...], file: Path | None):
        self.path = path
        self.file = file
        self.children: set[str] = set()
        # name -> absolute path it imports (from `use` items).
        self.imports: dict[str, tuple[str, ...]] = {}
        self.refs: list[tuple[str, ...]] = []  # absolute paths named
        self.code = ""  # the text outside `use` items


def absolute(module: Module, segs: list[str], modules: dict) -> tuple[str, ...] | None:
    """An absolute path for `segs` named inside `module`, or None for an
    external crate or a name not resolvable to this crate."""
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        return ("crate", *segs[1:])
    if head == "self":
        return (*module.path, *segs[1:])
    if head == "super":
        base = list(module.path)
        while segs and segs[0] == "super":
            base.pop()
            segs = segs[1:]
        return (*base, *segs)
    if head in module.children:
        return (*module.path, *segs)
    if head in module.imports:
        return (*module.imports[head], *segs[1:])
    return None


def resolve(path: tuple[str, ...], modules: dict, seen=None) -> tuple[str, ...] | None:
    """The module that defines what `path` names, following imports."""
    seen = seen or set()
    if path in seen:
        return None
    seen.add(path)
    # The longest prefix that is a module.
    k = len(path)
    while k > 0 and path[:k] not in modules:
        k -= 1
    if k == 0:
        return None
    mod = modules[path[:k]]
    if k == len(path):
        return mod.path
    name = path[k]
    if name in mod.imports:
        target = resolve((*mod.imports[name], *path[k + 1 :]), modules, seen)
        if target is not None:
            return target
    return mod.path


def load(src: Path) -> dict[tuple[str, ...], Module]:
    modules: dict[tuple[str, ...], Module] = {}
    texts: dict[tuple[str, ...], str] = {}
    for file in sorted(src.rglob("*.rs")):
        rel = file.relative_to(src)
        if rel == Path("main.rs") or rel.parts[0] == "bin":
            continue
        parts = list(rel.with_suffix("").parts)
        if parts == ["lib"]:
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        path = ("crate", *parts)
        modules[path] = Module(path, file)
        texts[path] = drop_test_blocks(strip_comments_and_strings(file.read_text()))
    # Inline modules (`mod name { ... }`) become modules of their own.
    for path, text in list(texts.items()):
        while True:
            m = re.search(rf"\bmod\s+({IDENT})\s*\{{", text)
            if not m:
                break
            end = matching_brace(text, m.end() - 1)
            inner = (*path, m.group(1))
            modules[inner] = Module(inner, modules[path].file)
            texts[inner] = text[m.end() : end]
            text = text[: m.start()] + text[end + 1 :]
        texts[path] = text
    for path in modules:
        if len(path) > 1 and path[:-1] in modules:
            modules[path[:-1]].children.add(path[-1])
    for path, text in texts.items():
        modules[path].code = re.sub(r"\buse\s+[^;]+;", "", text)
    # Imports first (a path in code may start with an imported name), then
    # every path named in `use` trees and in code.
    for path, text in texts.items():
        mod = modules[path]
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            raw = m.group(1)
            for segs, alias in use_leaves(raw):
                # A glob (`a::*`) uses module `a`; a named leaf is imported.
                target = absolute(mod, segs if alias else segs[:-1], modules)
                if target is None:
                    continue
                if alias:
                    mod.imports[alias] = target
                mod.refs.append(target)
        for m in re.finditer(rf"\b((?:{IDENT}::)+{IDENT})", mod.code):
            segs = m.group(1).split("::")
            target = absolute(mod, segs, modules)
            if target is not None:
                mod.refs.append(target)
    return modules


def use_leaves(raw: str) -> list[tuple[list[str], str | None]]:
    """A use tree's leaves as (segments, the name it binds): `a::{b, c as d,
    e::*}` gives (a::b, b), (a::c, d), (a::e::*, None)."""
    raw = re.sub(r"\s+as\s+", " as ", raw.strip())
    raw = re.sub(r"\s*::\s*", "::", raw)
    raw = re.sub(r"\s*([{},])\s*", r"\1", raw)
    out = []
    for leaf in _leaves(raw):
        alias = None
        if " as " in leaf:
            leaf, alias = leaf.split(" as ")
        segs = leaf.split("::")
        if segs[-1] == "*":
            out.append((segs, None))
            continue
        if segs[-1] == "self":
            segs = segs[:-1]
        out.append((segs, alias or segs[-1]))
    return out


def _leaves(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    brace = tree.find("{")
    if brace < 0:
        return [tree] if tree else []
    prefix = tree[:brace]
    inner = tree[brace + 1 : tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:k])
            start = k + 1
    parts.append(inner[start:])
    return [prefix + leaf for part in parts if part for leaf in _leaves(part)]


def graph(modules: dict) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {p: set() for p in modules}
    for path, mod in modules.items():
        for ref in mod.refs:
            target = resolve(ref, modules)
            # A module may use what its ancestors define (the items it is
            # part of); that is ownership, not a dependency between layers.
            if target is not None and target != path[: len(target)]:
                edges[path].add(target)
    return edges


def components(edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
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
                    out.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def one_cycle(comp, edges):
    members = set(comp)
    start = min(comp)
    # Breadth-first from start back to start within the component.
    prev = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for w in sorted(edges[node]):
            if w not in members:
                continue
            if w == start:
                path = [node]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return [start] + list(reversed(path))[1:] + [start] if len(path) > 1 else [start, node, start]
            if w not in prev:
                prev[w] = node
                queue.append(w)
    return comp


def name(path):
    return "::".join(path)


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "src")
    modules = load(src)
    edges = graph(modules)
    cycles = [c for c in components(edges) if len(c) > 1]
    if not cycles:
        print(f"module graph: {len(modules)} modules, {sum(map(len, edges.values()))} uses, no cycle")
        return 0
    for comp in sorted(cycles, key=lambda c: name(min(c))):
        print(f"cycle among {len(comp)} modules: {', '.join(sorted(map(name, comp)))}")
        print("  e.g. " + " -> ".join(map(name, one_cycle(comp, edges))))
    print(f"{len(cycles)} import cycle(s) in {src}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
