"""The backend registry: lazy imports and errors that name the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rlvr_boundary import backends
from rlvr_boundary.errors import InputError, MissingExtraError


def test_import_is_lazy():
    code = ("import sys, rlvr_boundary.backends, rlvr_boundary.commands.sample, "
            "rlvr_boundary.commands.score, rlvr_boundary.analysis.learning; "
            "print(sorted(m for m in ('torch', 'transformers', 'ray', 'httpx', 'vllm') if m in sys.modules))")
    src = str(Path(__file__).parents[2] / "src")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": src, "PATH": ""})
    assert out.stdout.strip() == "[]"


def test_missing_dependency_names_the_extra(monkeypatch):
    monkeypatch.setitem(backends.BACKENDS, "fake",
                        backends.BackendSpec("x.y:Z", "fakeextra", "no_such_module_xyz", "fake"))
    with pytest.raises(MissingExtraError, match=r"pip install 'rlvr-boundary\[fakeextra\]'"):
        backends.get_backend("fake")
    with pytest.raises(InputError, match="known"):
        backends.get_backend("nope")


def test_every_registered_backend_names_a_class():
    fields = set(backends.BackendOptions.__dataclass_fields__)
    for name, spec in backends.BACKENDS.items():
        module, cls = spec.target.split(":")
        assert module.startswith("rlvr_boundary.backends.") and cls and spec.extra in (
            "hf", "vllm", "openai", "ray")
        assert spec.help and set(spec.options) <= fields, name


def test_a_dependency_no_extra_provides_names_its_own_install_command():
    from rlvr_boundary.errors import require

    with pytest.raises(MissingExtraError) as err:
        require("no_such_module_xyz", None, "the verl adapter", install="pip install verl==0.9.1")
    assert "pip install verl==0.9.1" in str(err.value) and "rlvr-boundary[" not in str(err.value)


def test_cpu_default_is_one_thread_and_an_explicit_count_wins():
    """torch's default (a thread per core) collapsed sampling on a shared 2-core machine
    (4.5 samples/s against 247 with one thread): the CPU default is one thread."""
    from rlvr_boundary.backends import BackendOptions, _kwargs

    assert _kwargs("transformers", BackendOptions(), "m")["num_threads"] == 1
    assert _kwargs("transformers", BackendOptions(threads=3), "m")["num_threads"] == 3
    assert _kwargs("transformers", BackendOptions(device="cuda"), "m")["num_threads"] is None
    ray = _kwargs("ray", BackendOptions(backend="ray"), "m")
    assert ray["inner_kwargs"]["num_threads"] == 1  # each Ray worker too


def test_sample_cli_runs_torch_on_one_thread_by_default(tiny_model, tmp_path):
    import json

    import torch

    from rlvr_boundary.cli import main

    before = torch.get_num_threads()
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"prompt_id": "a", "prompt": "1 + 1?"}) + "\n")
    try:
        torch.set_num_threads(2)
        assert main(["sample", "--model", str(tiny_model), "--prompts", str(prompts),
                     "--out", str(tmp_path / "s"), "--n", "1", "--max-new-tokens", "2"]) == 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_loading_a_model_prints_no_weights_bar(tiny_model, tmp_path, capfd):
    """transformers' "Loading weights" bar showed on every sample/score run."""
    import transformers.utils.logging as tl

    from rlvr_boundary.backends import get_backend

    assert tl.is_progress_bar_enabled()
    capfd.readouterr()
    get_backend("transformers", model=str(tiny_model), num_threads=1)
    got = capfd.readouterr()
    assert "Loading weights" not in got.err + got.out
    assert tl.is_progress_bar_enabled()  # restored for the library's other callers
