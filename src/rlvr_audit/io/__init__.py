"""IO at the edge: the rollout/count data model, readers, writers and format adapters.

- :mod:`rlvr_audit.io.schema`: canonical columns, types and manifest keys.
- :mod:`rlvr_audit.io.rollouts`: stream, validate, reduce and write rollout tables.
- :mod:`rlvr_audit.io.counts`: per-prompt counts and alignment across models.
- :mod:`rlvr_audit.io.store`: sharded, resumable output directories.
- :mod:`rlvr_audit.io.formats`: one entry point that detects a file's format.
- :mod:`rlvr_audit.io.adapters`: formats of other tools (lm-eval, lighteval, verl, ...).
"""
