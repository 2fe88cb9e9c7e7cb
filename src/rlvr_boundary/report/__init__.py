"""Presentation: words, figures and the page, made from result files.

- :mod:`.words`: every sentence a reader sees (page and console);
- :mod:`.build`: :func:`~.build.make_report` (inputs -> result file) and
  :func:`~.build.render_report` (result file -> page and figures);
- :mod:`.figures`, :mod:`.html`: the drawing and the page.

This ``__init__`` imports nothing, so ``compare`` can use the words without
loading the audit's dependencies.
"""
