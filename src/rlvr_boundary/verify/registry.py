"""The verifiers' choices, named once: the math scorers and the answer-extraction methods.

Standard library only and nothing else imported, so a command line lists them
without loading the graders. :mod:`.math` and :mod:`.extract` take their names
from here.
"""

from __future__ import annotations

__all__ = ["MATH_BACKENDS", "EXTRACT_METHODS"]

#: The math scorers (``verify --backend``): name -> one line of help. Their known limits
#: are :data:`rlvr_boundary.verify.math.KNOWN_LIMITS`.
MATH_BACKENDS = {
    "math-verify": "math-verify (pinned; sympy equivalence with its known false accepts "
                   "re-checked); the default",
    "canonical": "exact canonical strings (rational and surd arithmetic, no sympy): may miss "
                 "an equivalence, never accepts a different value",
}

#: Answer-extraction methods, in the default order of trial (``verify --extract``).
EXTRACT_METHODS = ("boxed", "answer_is", "last_number")
