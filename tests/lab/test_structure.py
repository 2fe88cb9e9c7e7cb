"""The lab's structure: shared stages, leaf experiments, one registry, one command line."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from rlvr_boundary.lab.registry import EXPERIMENTS

LAB = Path(__file__).parents[2] / "src" / "rlvr_boundary" / "lab"
LEAVES = {"narrowing", "entropy", "distill", "replace", "seeds", "prolonged", "monitored"}


def _lab_imports() -> dict[str, set[str]]:
    """module -> the lab modules it imports (top level or inside functions)."""
    out = {}
    for path in sorted(LAB.glob("*.py")):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                mod = node.module
                if mod == "rlvr_boundary.lab":
                    deps |= {a.name for a in node.names}
                elif mod.startswith("rlvr_boundary.lab."):
                    deps.add(mod.split(".")[2])
            elif isinstance(node, ast.Import):
                deps |= {a.name.split(".")[2] for a in node.names
                         if a.name.startswith("rlvr_boundary.lab.")}
        out[path.stem] = deps - {path.stem}
    return out


def test_experiments_are_leaves_and_the_lab_has_no_import_circle():
    graph = _lab_imports()
    for leaf in LEAVES:
        assert not graph[leaf] & LEAVES, (leaf, graph[leaf] & LEAVES)
    for name in graph:  # nothing imports a leaf (the registry names them as strings)
        assert not graph[name] & LEAVES, name
    seen, stack = set(), []

    def visit(n):
        assert n not in stack, " -> ".join(stack + [n])
        if n in seen:
            return
        stack.append(n)
        for m in graph.get(n, ()):
            if m in graph:
                visit(m)
        stack.pop()
        seen.add(n)

    for n in graph:
        visit(n)


def test_every_registered_experiment_loads_and_its_options_have_presets():
    for exp in EXPERIMENTS.values():
        assert LEAVES >= {exp.runner.split(":")[0].split(".")[-1]}
        assert callable(exp.load("runner"))
        if exp.options:
            cls = exp.load("options")
            for preset in ("quick", "full"):
                assert isinstance(cls.from_preset(preset), cls)


def test_the_command_line_reads_the_registries():
    import argparse

    from rlvr_boundary.commands import lab as cmd
    from rlvr_boundary.lab.task import TASKS

    ap = argparse.ArgumentParser()
    cmd.register(ap.add_subparsers())
    run = ap._subparsers._group_actions[0].choices["lab"]._subparsers._group_actions[0] \
        .choices["run"]
    acts = {a.dest: a for a in run._actions}
    assert acts["experiment"].choices == list(EXPERIMENTS)
    assert acts["task"].choices == list(TASKS)
    for exp in EXPERIMENTS.values():
        assert exp.help in acts["experiment"].help


def test_a_wrong_estimator_is_refused_with_the_known_names(tmp_path, capsys):
    from rlvr_boundary.cli import main
    from rlvr_boundary.shaping import ESTIMATORS

    assert main(["lab", "run", "--estimator", "nope", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in ESTIMATORS)
    assert main(["lab", "run", "--estimator", "remax", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()


def test_no_hidden_second_command_line():
    for path in LAB.glob("*.py"):
        src = path.read_text(encoding="utf-8")
        assert "__main__" not in src and "argparse" not in src, path.name


def test_options_that_do_not_apply_are_refused_before_any_work(tmp_path):
    from rlvr_boundary.cli import main

    out = tmp_path / "x"
    assert main(["lab", "run", "--workers", "2", "--out", str(out)]) == 2
    assert main(["lab", "run", "--experiment", "distillation", "--task", "cued",
                 "--out", str(out)]) == 2
    with pytest.raises(SystemExit) as exc:  # argparse's own check of the seed list
        main(["lab", "run", "--experiment", "seeds", "--rl-seeds", "1,1", "--out", str(out)])
    assert exc.value.code == 2
    assert main(["lab", "run", "--experiment", "distillation", "--export-example",
                 str(tmp_path / "ex"), "--out", str(out)]) == 2
    assert not out.exists() or not any(out.iterdir())


def test_entropy_verb_refuses_a_bad_training_log(tmp_path):
    from rlvr_boundary.cli import main

    report = tmp_path / "report.json"
    report.write_text(json.dumps({"schema_version": "1.0", "kind": "report"}))
    log = tmp_path / "log.jsonl"
    log.write_text('{"step": 1, "reward": 0.5, "entropy": 0.2}\n{"step": 2, "reward": "x"}\n')
    assert main(["lab", "entropy", str(report), "--train-log", str(log),
                 "--out", str(tmp_path / "e")]) == 2
    assert main(["lab", "entropy", str(report), "--train-log", str(tmp_path / "none"),
                 "--out", str(tmp_path / "e")]) == 2
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.lab.stages import read_log

    with pytest.raises(InputError) as err:
        read_log(log)
    assert err.value.line == 2 and err.value.field == "reward"


def test_folder_records_versions_and_warns_when_they_differ(tmp_path):
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.lab import versions as V
    from rlvr_boundary.lab.config import LabConfig
    from rlvr_boundary.lab.stages import open_folder

    cfg = LabConfig.from_preset("quick")
    said = []
    open_folder(cfg, tmp_path, warn=said.append)
    now = V.installed()
    assert json.loads((tmp_path / "versions.json").read_text()) == now
    moved = V.differences(V.DOCUMENTED, now)
    if moved:  # another installation than the documented one: the warning names it
        assert len(said) == 1 and moved[0] in said[0]
    else:
        assert said == []
    # a folder started with another transformers: a warning naming it, the run goes on
    old = dict(now, transformers="5.24.0")
    (tmp_path / "versions.json").write_text(json.dumps(old))
    said.clear()
    open_folder(cfg, tmp_path, warn=said.append)
    assert any(f"transformers 5.24.0 -> {now['transformers']}" in s for s in said)
    with pytest.raises(InputError, match="different options"):
        open_folder(LabConfig.from_preset("quick", seed=1), tmp_path)
