"""Project rules that a linter alone would not enforce."""

import ast
import pathlib
import re

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "dpreg"
ALLOWED_NP_RANDOM = {"default_rng", "Generator", "SeedSequence", "RandomState", "BitGenerator",
                     "PCG64", "Philox"}


def python_files():
    return sorted(SRC.rglob("*.py"))


def test_there_is_source_to_check():
    assert len(python_files()) > 5


def test_no_global_numpy_rng_and_no_random_module():
    offenders = []
    for path in python_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                offenders += [f"{path}:{node.lineno} import {a.name}" for a in node.names
                              if a.name == "random" or a.name.startswith("random.")]
            elif isinstance(node, ast.ImportFrom) and node.module in {"random", "numpy.random"}:
                names = {a.name for a in node.names}
                if node.module == "random" or names - ALLOWED_NP_RANDOM:
                    offenders.append(f"{path}:{node.lineno} from {node.module} import {names}")
            elif isinstance(node, ast.Attribute) and node.attr not in ALLOWED_NP_RANDOM:
                v = node.value
                if (isinstance(v, ast.Attribute) and v.attr == "random"
                        and isinstance(v.value, ast.Name) and v.value.id in {"np", "numpy"}):
                    offenders.append(f"{path}:{node.lineno} np.random.{node.attr}")
    assert not offenders, "global RNG use in library code:\n" + "\n".join(offenders)


def test_the_rule_detects_violations(tmp_path):
    """The AST scan above must actually flag the forbidden patterns."""
    bad = "import random\nimport numpy as np\nx = np.random.laplace(0, 1)\n"
    tree = ast.parse(bad)
    hits = [n for n in ast.walk(tree)
            if (isinstance(n, ast.Import) and any(a.name == "random" for a in n.names))
            or (isinstance(n, ast.Attribute) and n.attr == "laplace")]
    assert len(hits) == 2


def test_no_unfinished_markers():
    pattern = re.compile(r"\b(TODO|FIXME|XXX)\b|NotImplementedError|pass  # stub")
    hits = [f"{p}:{i}" for p in python_files()
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits, hits
