"""The layout rules of docs/design.md, checked.

* Dependencies point one way: the core imports none of the heavy text/plot stack (nor
  scikit-learn); the models add only ``sklearn.base`` (the estimator contract).
* No import cycle anywhere inside ``bpetopics`` (module-level imports).
* A CLI command module never imports another one (shared code lives in the library, or
  in the click helpers of ``bpetopics/cli/__init__.py``).
"""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "bpetopics"
FORBIDDEN = ["gensim", "sklearn", "nltk", "networkx", "pandas", "pyLDAvis", "matplotlib"]
#: What scikit-learn's BaseEstimator brings with it (sklearn.base imports pandas when present).
ESTIMATOR_CONTRACT = ["sklearn", "pandas"]


def _loaded(modules: str, names) -> list:
    code = f"import sys, {modules}; print([m for m in {list(names)!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return eval(out.stdout.strip())  # a printed list of str


def test_core_imports_no_text_plotting_or_sklearn_library():
    assert _loaded("bpetopics.bpe.model, bpetopics.bpe.pursuit, bpetopics.bpe.batches, bpetopics.bpe.params",
                   FORBIDDEN) == []


def test_models_import_only_the_estimator_contract_beyond_the_core():
    allowed = [m for m in FORBIDDEN if m not in ESTIMATOR_CONTRACT]
    assert _loaded("bpetopics.models, bpetopics.models.registry", allowed) == []


def test_the_command_line_starts_without_torch():
    code = "import sys, bpetopics.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"



def test_the_top_level_entry_points_load_only_when_used():
    import bpetopics
    from bpetopics.runs import load_run, save_run
    from bpetopics.text import prepare_corpus

    assert (bpetopics.prepare_corpus, bpetopics.save_run, bpetopics.load_run) == (prepare_corpus, save_run, load_run)
    assert set(bpetopics.__all__) >= {"prepare_corpus", "save_run", "load_run", "PoissBPE"}
    assert _loaded("bpetopics", ["torch", "bpetopics.runs", "bpetopics.text"]) == []

# ------------------------------------------------------------------ the import graph
def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _top_level_statements(tree):
    """Statements run at import time: the module body, including inside if/try blocks."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            stack.extend(node.body)
            stack.extend(getattr(node, "orelse", []))
            stack.extend(getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                stack.extend(handler.body)


def _imports(name: str, path: Path, modules: dict) -> set:
    """The intra-package modules ``name`` imports at module level (each imported module
    and, for ``from m import x``, the submodule m.x when it is one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found = set()
    for node in _top_level_statements(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            if target in modules:
                found.add(target)
    return found


def import_graph() -> dict:
    """module -> the intra-package modules it imports at module level (a package's
    submodules importing their own ancestors are left out: Python allows it)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        graph[name] = {m for m in _imports(name, path, modules) if m != name and m not in ancestors}
    return graph


def find_cycle(graph: dict) -> list | None:
    """One cycle of ``graph`` as a list of modules, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_real_edges():
    graph = import_graph()
    assert "bpetopics.runs.folder" in graph["bpetopics.runs.checkpoints"]
    assert "bpetopics.bpe.prior" in graph["bpetopics.bpe.model"]
    assert "bpetopics.files" in graph["bpetopics.viz.draw"]


def test_no_import_cycle_inside_the_package():
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle)


def test_no_module_named_like_the_standard_library():
    shadowing = {"io", "types", "json", "csv", "random", "logging", "typing", "time"}
    assert [n for n in _modules() if n.split(".")[-1] in shadowing] == []


def test_cli_commands_never_import_each_other():
    """Every import, function-level ones included: a command module may import
    ``bpetopics.cli`` (its shared click helpers) but no other command module."""
    modules = _modules()
    commands = {n for n in modules if n.startswith("bpetopics.cli.")}
    offenders = []
    for name in sorted(commands):
        tree = ast.parse(modules[name].read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            offenders += [f"{name} imports {t}" for t in targets if t in commands and t != name]
    assert offenders == []


def _imported_modules(tree):
    """(module name, imported names) of every import statement, function-level included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module, [a.name for a in node.names]


def test_numba_is_imported_only_in_compiled_folders():
    """The speed lives apart from the algorithm: numba (and llvmlite) only in a
    ``compiled/`` package (one per model, and the text package's shard reads)."""
    offenders = []
    for name, path in sorted(_modules().items()):
        if "compiled" in name.split("."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{name} imports {m}" for m, _ in _imported_modules(tree)
                      if m.split(".")[0] in ("numba", "llvmlite")]
    assert offenders == []


def test_the_shared_algorithm_imports_no_model():
    """``bpetopics.bpe`` is what every model shares: it imports none of them."""
    offenders = []
    for name, path in sorted(_modules().items()):
        if name.startswith("bpetopics.bpe"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            offenders += [f"{name} imports {m}" for m, _ in _imported_modules(tree)
                          if m.startswith("bpetopics.") and not m.startswith("bpetopics.bpe")]
    assert offenders == []
