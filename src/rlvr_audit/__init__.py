"""rlvr-audit: what did an RLVR run cost the model's reasoning boundary?

Layers (dependencies point one way, top to bottom):

- ``rlvr_audit.cli`` and ``rlvr_audit.commands``: one file per CLI verb; load, call, write.
- ``rlvr_audit.report``, ``rlvr_audit.io``, ``rlvr_audit.verify``, backends: the edge.
- ``rlvr_audit.core``, ``rlvr_audit.theory``, ``rlvr_audit.shaping``: pure numpy/scipy.
"""

from rlvr_audit._version import __version__

__all__ = ["__version__"]
