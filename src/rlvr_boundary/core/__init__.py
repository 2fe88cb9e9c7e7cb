"""The numeric core of rlvr-boundary.

Contract: modules in this package depend on NumPy and SciPy only. They take
plain arrays (with explicit ``axis=`` where it matters) and return arrays or
small dicts of arrays; no file IO, no printing, no pandas/pyarrow/torch. A test
imports this package with those libraries made unavailable.

- :mod:`~rlvr_boundary.core.passk`: unbiased pass@k for all k, avg@n, maj@k, plug-in curve.
- :mod:`~rlvr_boundary.core.compare`: paired difference D(k), crossings, crossing
  bound, price, Delta_SE, simultaneous band, paired bootstrap.
- :mod:`~rlvr_boundary.core.coverage`, :mod:`~rlvr_boundary.core.support`,
  :mod:`~rlvr_boundary.core.diversity`, :mod:`~rlvr_boundary.core.tokens`: the audit's
  other views.
"""
