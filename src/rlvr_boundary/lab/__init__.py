"""The RLVR lab: a tiny model trained from scratch on CPU that reproduces the papers' phenomena.

Read top to bottom: :mod:`.task` (the strategy-labelled task, parser, verifier),
:mod:`.tokenizer` and :mod:`.model` (a tiny Llama with a locally trained
tokenizer, saved as a Hugging Face folder), :mod:`.pretrain` (next-token
pretraining on a mixture of strategy traces: the base model), :mod:`.grpo` (GRPO
with the shaping package's estimators), and :mod:`.run` (the resumable pipeline behind
``rlvr-boundary lab run``; it samples checkpoints through the transformers
backend of :mod:`rlvr_boundary.backends`).

Only :mod:`.task` is importable without torch; the others need the ``hf`` extra.
"""
