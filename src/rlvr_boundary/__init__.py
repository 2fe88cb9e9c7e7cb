"""rlvr-boundary: what did an RLVR run cost the model's reasoning boundary?

Layers (dependencies point one way, top to bottom):

- ``rlvr_boundary.cli`` and ``rlvr_boundary.commands``: one file per CLI verb; load, call, write.
- ``rlvr_boundary.report``, ``rlvr_boundary.io``, ``rlvr_boundary.verify``, backends: the edge.
- ``rlvr_boundary.core``, ``rlvr_boundary.theory``, ``rlvr_boundary.shaping``: pure numpy/scipy.
"""

from rlvr_boundary._version import __version__

__all__ = ["__version__"]
