"""The numeric core of rlvr-audit.

Contract: modules in this package depend on NumPy and SciPy only. They take
plain arrays (with explicit ``axis=`` where it matters) and return arrays or
small dicts of arrays; no file IO, no printing, no pandas/pyarrow/torch. A test
imports this package with those libraries made unavailable.

- :mod:`~rlvr_audit.core.passk`: unbiased pass@k for all k, avg@n, maj@k, plug-in curve.
- :mod:`~rlvr_audit.core.compare`: paired difference D(k), crossings, crossing
  bound, price, Delta_SE, simultaneous band, paired bootstrap.
- :mod:`~rlvr_audit.core.coverage`, :mod:`~rlvr_audit.core.support`,
  :mod:`~rlvr_audit.core.diversity`, :mod:`~rlvr_audit.core.tokens`: the audit's
  other views.
"""
