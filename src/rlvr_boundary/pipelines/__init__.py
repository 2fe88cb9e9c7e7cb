"""One home for every workflow: inputs and one options object in, a result document out.

Each module is one workflow, the only place that sequences load -> compute ->
write; the command line, the app and the lab call the same functions, so they
cannot differ:

- :mod:`.compare`: two models' results -> ``compare`` (``rlvr-boundary compare``);
- :mod:`.audit`: any number of models -> ``report`` and its page (``report``);
- :mod:`.price`: a rates table or a printed curve -> ``price`` (``price``);
- :mod:`.theory`: the suite, the diagnosis and the frontier of a strategy
  matrix -> ``theory-verify``, ``theory-diagnose``, ``theory-frontier``;
- :mod:`.plan`: pilot counts -> ``plan`` (``plan``);
- :mod:`.sample`: a checkpoint and prompts -> a rollout table and ``sample`` (``sample``);
- :mod:`.score`: rollouts under another model -> scored rollouts; two checkpoints ->
  ``learning_landed`` (``score``);
- :mod:`.verify`: raw completions and gold answers -> graded rollouts and
  ``verify`` (``verify``);
- :mod:`.rft_select`: rollouts -> selected RFT data and ``rft-select`` (``rft-select``);
- :mod:`.common`: steps the count workflows share.

Each workflow's options dataclass lives beside its ``run`` and is its command
line (:mod:`rlvr_boundary.options`). Module imports are light (the command line
imports the options to build its parser); heavy libraries load inside the
functions. Results are versioned documents (:mod:`rlvr_boundary.kinds`) and
the page, figures and words are drawn from them alone (:mod:`rlvr_boundary.report`).
"""
