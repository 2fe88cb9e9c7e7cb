"""Verifiers: grade raw completions, safely (docs/verifiers.md).

- :mod:`.quality`: output-quality flags (pure Python; also used by the report and RFT).
- :mod:`.extract`: final-answer extraction (last box, configurable fallbacks).
- :mod:`.canonical`: canonical answer strings (exact rational/surd arithmetic) for classes.
- :mod:`.math`: math grading with math-verify (pinned, the default) or, by choice, the
  canonical backend; several backends in one pass for scorer sensitivity.
- :mod:`.pool`: worker processes with a hard timeout per item, JSON over the pipe.
- :mod:`.code` / :mod:`.sandbox`: code tests behind a boundary; where the tests' form
  allows, checked from a second sandbox the program cannot reach (:mod:`.runtypes`:
  the options and results shared with :mod:`.fusion`, a SandboxFusion client).
- :mod:`.run`: the ``rlvr-boundary verify`` job (resumable, sharded).

Nothing in this package imports or executes model output in the calling process.
"""
