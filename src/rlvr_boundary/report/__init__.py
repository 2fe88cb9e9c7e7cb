"""Presentation: words, figures and the page, made from result documents only.

- :mod:`.words`: every sentence a reader sees (page, console, app), one console
  rendering per result kind, and the glossary;
- :mod:`.build`: :func:`~.build.render_report`, a ``report`` result document ->
  page and figures;
- :mod:`.figures`, :mod:`.html`: the drawing and the page;
- :mod:`.compare_figures`, :mod:`.theory_figures`: the figures of the
  ``compare``, ``price`` and ``theory-frontier`` results.

Nothing here reads inputs or computes a number: the workflows
(:mod:`rlvr_boundary.pipelines`) do, and hand over the result document.
"""
