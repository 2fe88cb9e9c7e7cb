"""Theory lab: the No Free Lunch toolkit (seed 003) on the shared-strategy model.

Pure numpy/scipy (LPs with scipy's HiGHS). Modules, in reading order:

- :mod:`.model`: strategies x prompts fitness ``F[s, x]``, mixtures, the
  exponential tilt and entropic mirror descent, pass@k of a mixture;
- :mod:`.specialization`: exclusive and dominant specialization, the 3x3
  counterexample;
- :mod:`.stiemke`: free-lunch direction vs strictly positive equalizing weights;
- :mod:`.frontier`: the price frontier LP over floors tau, and the tilt path;
- :mod:`.grpo`: GRPO simulated on the strategy model, TV to the tilt at
  matched entropy;
- :mod:`.crossings`: crossings of pass@k curves, the bound, constructed
  instances with exactly m crossings, the difficulty-order family;
- :mod:`.generators`: six documented random instance generators;
- :mod:`.suite`: the fixed-seed verification suite behind ``rlvr-audit theory verify``.
"""
