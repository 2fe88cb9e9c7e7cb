"""The RLVR lab: a tiny model trained from scratch on CPU, RL on it, and an audit of what RL did.

Read top to bottom: :mod:`.task` (the strategy-labelled task in two families,
parser, verifier), :mod:`.splits` (every training corpus and the audited
problems, drawn in one place: no audited problem is trained on),
:mod:`.tokenizer` and :mod:`.model` (a tiny Llama with a locally trained
tokenizer, saved as a Hugging Face folder), :mod:`.pretrain` (next-token
training: the base model), :mod:`.grpo` (GRPO with the shaping package's
estimators, KL and reference resets), :mod:`.strategy` (the strategy and cue
views), :mod:`.controls` (sharpened base, random template, cue-following
fine-tune), :mod:`.stages` (the shared stages: pretrain, RL, sample, audit,
summary), then one leaf module per experiment (:mod:`.narrowing`,
:mod:`.distill`, :mod:`.entropy`, :mod:`.seeds`, :mod:`.prolonged`,
:mod:`.replace`), named with their options in :mod:`.registry` and run by
:mod:`.launch` (``rlvr-boundary lab run``).

:mod:`.task`, :mod:`.splits`, :mod:`.strategy`, :mod:`.registry` and the
options import without torch; training and sampling need the ``hf`` extra.
"""
