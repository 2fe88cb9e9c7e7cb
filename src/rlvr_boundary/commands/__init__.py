"""CLI verbs, one module each; see :mod:`rlvr_boundary.cli`.

A verb module defines ``register(subparsers)`` and keeps imports of heavy
libraries inside the function that runs the verb.
"""
