"""The layering the code relies on, checked from the source alone (pure: ast, no imports).

ingest receives, rca analyses, webapp shows: data flows one way, so ingest must not
import rca or webapp, rca must not import webapp, and no two modules may import each
other in a ring (a cycle makes any module of it load all of it, and the web process
would pull the worker's code). Every import counts, those inside functions too: they
run sooner or later. Stages live in folders, so the top of rca/ stays small, and a file
past 400 lines is split by concept (STYLE.md) before it grows further.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ingest", "rca", "webapp")
LAYER = {"ingest": 0, "rca": 1, "webapp": 2}
MAX_RCA_TOP_MODULES = 10
MAX_LINES = 400
#: The line rule holds for every folder of our Python, tests and benchmarks included.
LINE_COUNTED = (*PACKAGES, "tests", "bench", "demo", "docs")


def _source_files(folders: tuple[str, ...] = PACKAGES) -> Iterator[Path]:
    for package in folders:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.relative_to(ROOT).parts:
                yield path


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in _source_files()}


def _resolve(name: str) -> str | None:
    """The first-party module an imported name lives in (``a.b.func`` -> ``a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imported_names(module: str, path: Path) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in MODULES.items():
        for name in _imported_names(module, path):
            target = _resolve(name)
            if target is not None and target != module:
                graph[module].add(target)
    return graph


GRAPH = _import_graph()


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _describe(component: list[str]) -> str:
    inside = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(GRAPH[a] & inside)]
    return f"{len(component)} modules: " + "; ".join(edges)


def test_the_graph_sees_every_package() -> None:
    # A guard that parses nothing passes everything: make sure it read the real tree.
    for package in PACKAGES:
        assert any(m.startswith(f"{package}.") and GRAPH[m] for m in MODULES), package


def test_no_import_cycles() -> None:
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(c) for c in cycles)


def test_imports_only_go_down_the_layers() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if LAYER[target.partition(".")[0]] > LAYER[module.partition(".")[0]]
    )
    assert not upward, "ingest < rca < webapp; these import a layer above them:\n" + "\n".join(
        upward
    )


def test_the_top_of_rca_stays_small() -> None:
    top = sorted(p.name for p in (ROOT / "rca").glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_RCA_TOP_MODULES, (
        f"{len(top)} modules at the top of rca/ (at most {MAX_RCA_TOP_MODULES}); "
        f"move some into their stage's folder: {', '.join(top)}"
    )


def test_no_source_file_is_over_400_lines() -> None:
    long = {}
    for path in _source_files(LINE_COUNTED):
        with path.open(encoding="utf-8") as handle:
            lines = sum(1 for _ in handle)
        if lines > MAX_LINES:
            long[str(path.relative_to(ROOT))] = lines
    assert not long, f"over {MAX_LINES} lines, split by concept: " + ", ".join(
        f"{name} ({lines})" for name, lines in sorted(long.items())
    )
