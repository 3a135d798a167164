"""The layout rules of docs/design.md, checked.

* Dependencies point one way: the core imports none of the heavy text/plot stack (nor
  scikit-learn); the models add only ``sklearn.base`` (the estimator contract).
* No import cycle anywhere inside ``bpetopics``, counting every import: those inside
  functions too (a cycle hidden behind a function-level import is still a cycle).
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


def _imported_module(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module ``from ... import`` reads in module ``name``, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, tree: ast.AST, is_package: bool, modules) -> set:
    """The intra-package modules that module ``name`` (parsed as ``tree``) imports anywhere,
    inside functions too: each imported module with the packages above it (importing
    ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first) and, for ``from m import x``,
    the submodule m.x when it is one."""
    found = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _imported_module(name, is_package, node)
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            parts = target.split(".")
            found.update(m for m in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if m in modules)
    return found


def _imports(name: str, path: Path, modules: dict) -> set:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return imports_of(name, tree, path.name == "__init__.py", modules)


def import_graph() -> dict:
    """module -> the intra-package modules it imports, anywhere in it (a package's
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
    assert "bpetopics.runs.saved_model" in graph["bpetopics.runs.checkpoints"]
    assert "bpetopics.bpe.prior" in graph["bpetopics.bpe.model"]
    assert "bpetopics.files" in graph["bpetopics.viz.draw"]
    # an import inside a function, and the package it runs first
    assert {"bpetopics.runs.image_job", "bpetopics.runs"} <= graph["bpetopics.experiments.image_table_runs"]


def test_the_graph_sees_imports_inside_functions_in_every_form():
    modules = {"p", "p.a", "p.b", "p.c", "p.d", "p.e", "p.q", "p.q.f"}
    source = """
import os

def late():
    from . import a
    from .b import thing
    import p.c as c_module
    class Inner:
        def method(self):
            from p import d, not_a_module
            from p.q import f
    return a, thing, c_module

try:
    from .e import x
except ImportError:
    pass
"""
    assert imports_of("p.mod", ast.parse(source), False, modules) == {"p", "p.a", "p.b", "p.c", "p.d", "p.e",
                                                                      "p.q", "p.q.f"}
    assert imports_of("p.q", ast.parse("from . import f\nfrom .. import a"), True, modules) == {"p.q", "p.q.f", "p",
                                                                                             "p.a"}


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


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(name: str, tree: ast.AST, is_package: bool, modules) -> list:
    """Where module ``name`` uses a private name of another module of the package: ``from m
    import _x`` (anywhere in it), an import of a private module (``m._y``), or ``m._x`` on
    a module it imported (``import p.m as m``, ``from p import m``)."""
    found, bound = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bpetopics"):
                    found += [f"{name}:{node.lineno} imports {alias.name}"
                              for part in alias.name.split(".") if _is_private(part)]
                    if alias.asname and alias.name in modules:
                        bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            module = _imported_module(name, is_package, node)
            if not module.startswith("bpetopics") or module == name:
                continue
            found += [f"{name}:{node.lineno} imports {module}" for part in module.split(".") if _is_private(part)]
            for alias in node.names:
                if _is_private(alias.name):
                    found.append(f"{name}:{node.lineno} imports {alias.name} from {module}")
                elif f"{module}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{module}.{alias.name}"
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name)
                and bound.get(node.value.id, name) != name):
            found.append(f"{name}:{node.lineno} uses {node.value.id}.{node.attr} of {bound[node.value.id]}")
    return found


def test_the_private_name_check_finds_each_form():
    modules = {"bpetopics.a", "bpetopics.a.b", "bpetopics.a.c"}
    source = """
from bpetopics.a.b import public, _private, __version__
from . import c
import bpetopics.a.b as b_module

def late():
    from bpetopics.a._hidden import thing
    return c._helper(), b_module._other, c.public
"""
    found = private_imports("bpetopics.a.mod", ast.parse(source), False, modules)
    assert sorted(found) == ["bpetopics.a.mod:2 imports _private from bpetopics.a.b",
                             "bpetopics.a.mod:7 imports bpetopics.a._hidden",
                             "bpetopics.a.mod:8 uses b_module._other of bpetopics.a.b",
                             "bpetopics.a.mod:8 uses c._helper of bpetopics.a.c"]
    # its own private names, and another module's dunders, are a module's own business
    assert private_imports("bpetopics.a.b", ast.parse("from bpetopics.a.b import _x\n"), False, modules) == []


def test_no_private_name_is_used_across_modules():
    """A name with a leading underscore belongs to its module: what another module needs
    is public (named, documented), or lives where it is used."""
    modules = _modules()
    offenders = []
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += private_imports(name, tree, path.name == "__init__.py", modules)
    assert offenders == []


def test_the_benchmarks_use_no_private_name_of_the_package():
    """The benchmarks use the library as a user would: through its public names."""
    modules = _modules()
    offenders = []
    for path in sorted((PACKAGE.parent / "benchmarks").glob("*.py")):
        name = f"benchmarks.{path.stem}"
        offenders += private_imports(name, ast.parse(path.read_text(encoding="utf-8")), False, modules)
    assert offenders == []
