"""Aligned counts plus validated options in, JSON-ready results out.

One module per entry point: :mod:`pairwise` (``compare``), :mod:`audit` (``report``)
and :mod:`price` (the count-free price diagnostic). Nothing here writes files or
forms sentences: the commands write the result file, and ``report/words.py`` says
what the numbers mean.
"""
