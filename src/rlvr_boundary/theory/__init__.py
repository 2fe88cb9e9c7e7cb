"""Theory lab: the No Free Lunch toolkit ("No Free Lunch in RLVR") on the shared-strategy model.

Contract: this package depends on NumPy and SciPy only (LPs with scipy's
HiGHS); a test imports it with torch, pyarrow, rich and matplotlib blocked.
It reuses :mod:`rlvr_boundary.core.compare` (crossing bound, sign changes, grid
crossings, price) and :mod:`rlvr_boundary.core.passk` (plug-in pass@k).

Modules, in reading order:

- :mod:`.model`: fitness ``F[s, x]``, mixtures, pass@k of a mixture, the
  exponential tilt, entropic mirror descent (closed form and a numerically
  solved proximal step);
- :mod:`.specialization`: exclusive and dominant specialization (definitions
  and the sufficient condition, with proofs), the 3x3 counterexample;
- :mod:`.stiemke`: free-lunch direction vs strictly positive equalizing weights;
- :mod:`.frontier`: the price frontier LP over floors tau, its vertex-enumeration
  reference, the tilt path;
- :mod:`.grpo`: GRPO simulated on the strategy model (sampled or expected,
  softmax or natural update, with or without std normalization), TV to the
  tilt at matched entropy;
- :mod:`.crossings`: observed crossings beside the bound, instances with exactly
  m crossings, the two difficulty-order families;
- :mod:`.generators`: six documented random instance generators;
- :mod:`.suite`: the fixed-seed verification suite behind ``rlvr-boundary theory verify``.
"""
