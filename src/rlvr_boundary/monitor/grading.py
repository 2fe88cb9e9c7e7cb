"""Grade the monitor's samples: our math verifier in worker processes, or the user's function.

- ``"math"``: each completion against its prompt's ``gold`` answer with
  :func:`rlvr_boundary.verify.math.grade_math` in a
  :class:`~rlvr_boundary.verify.pool.TimeoutPool` (a hard timeout and a memory
  cap per item, JSON over the pipe: model output never runs or parses in the
  training process). The pool is started at the first look and kept for the
  next ones.
- a callable ``verify(prompt, text) -> bool | dict``: the user's own verifier
  (the same function as the training reward, typically), run in this process.
  A dict may carry ``correct`` plus ``answer`` and ``verify_status``; a value
  that is neither a bool nor such a dict is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from rlvr_boundary.errors import InputError

__all__ = ["Grader"]


class Grader:
    """Grades completions of the held-out prompts; holds the worker pool between looks.

    Parameters
    ----------
    verifier
        ``"math"`` or a callable ``verify(prompt: dict, text: str)``.
    workers, timeout, memory_mb
        Math worker processes, hard seconds per item, and memory each may add.
    math_options
        :class:`rlvr_boundary.verify.math.MathOptions` (default: math-verify).
    """

    def __init__(self, verifier, *, workers: int = 2, timeout: float = 10.0,
                 memory_mb: int = 2048, math_options=None) -> None:
        if verifier != "math" and not callable(verifier):
            raise InputError("verifier must be 'math' or a function verify(prompt, text)",
                             field="verifier")
        self.verifier = verifier
        self.workers, self.timeout, self.memory_mb = workers, timeout, memory_mb
        self.math_options = math_options
        self.pool = None

    def describe(self) -> dict:
        """Name and version of the verifier, for the manifest."""
        if self.verifier == "math":
            from rlvr_boundary.verify.math import MathOptions, backend_name, options_to_json

            opts = self.math_options or MathOptions()
            return {"name": backend_name(opts), "options": options_to_json(opts)}
        fn: Callable = self.verifier
        return {"name": f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"}

    def grade(self, prompts: dict[str, dict], rows: list[dict]) -> list[dict]:
        """``correct``, ``answer``, ``verify_status`` of each row (``prompt_id``, ``text``)."""
        if self.verifier == "math":
            return self._grade_math(prompts, rows)
        out = []
        for r in rows:
            got = self.verifier(prompts[r["prompt_id"]], r.get("text") or "")
            if isinstance(got, (bool,)) or type(got).__name__ == "bool_":
                out.append({"correct": bool(got), "answer": None, "verify_status": "ok"})
            elif isinstance(got, dict) and isinstance(got.get("correct"), bool):
                out.append({"correct": got["correct"], "answer": got.get("answer"),
                            "verify_status": got.get("verify_status", "ok")})
            else:
                raise InputError(f"the verifier returned {type(got).__name__} for prompt "
                                 f"{r['prompt_id']!r}; expected a bool or a dict with a bool "
                                 "'correct'", field="verifier")
        return out

    def _grade_math(self, prompts: dict[str, dict], rows: list[dict]) -> list[dict]:
        from rlvr_boundary.verify.math import MathOptions, as_text, grade_math_job, options_to_json

        opts = self.math_options or MathOptions()
        missing = sorted({r["prompt_id"] for r in rows if prompts[r["prompt_id"]].get("gold")
                          in (None, "")})
        if missing:
            raise InputError(f"math grading needs a gold answer for every held-out prompt; "
                             f"none for {', '.join(missing[:5])}", field="gold")
        if self.pool is None:
            from rlvr_boundary.verify.pool import TimeoutPool

            preload = ["rlvr_boundary.verify.math"]
            if "math-verify" in opts.backends:
                preload += ["math_verify", "sympy"]
            self.pool = TimeoutPool(grade_math_job, workers=self.workers, timeout=self.timeout,
                                    preload=tuple(preload), memory_mb=self.memory_mb).__enter__()
        mopts = options_to_json(opts)
        items = ((str(prompts[r["prompt_id"]]["gold"]), as_text(r.get("text")), mopts)
                 for r in rows)
        results: list = [None] * len(rows)
        for i, res in self.pool.map(items):
            results[i] = {"correct": bool(res["correct"]), "answer": res.get("answer"),
                          "verify_status": res["verify_status"]}
        return results

    def close(self) -> None:
        """Stop the worker pool (if any)."""
        if self.pool is not None:
            self.pool.__exit__(None, None, None)
            self.pool = None
