"""IO at the edge: the rollout/count data model, readers, writers and format adapters.

- :mod:`rlvr_boundary.io.schema`: canonical columns, types and manifest keys.
- :mod:`rlvr_boundary.io.rollouts`: stream, validate, reduce and write rollout tables.
- :mod:`rlvr_boundary.io.counts`: per-prompt counts and alignment across models.
- :mod:`rlvr_boundary.io.store`: sharded, resumable output directories.
- :mod:`rlvr_boundary.io.formats`: one entry point that detects a file's format.
- :mod:`rlvr_boundary.io.adapters`: formats of other tools (lm-eval, lighteval, verl, ...).
"""
