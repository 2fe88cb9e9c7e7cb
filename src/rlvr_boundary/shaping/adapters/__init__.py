"""Trainer adapters: verl (:mod:`.verl`) and TRL (:mod:`.trl`).

Each imports its trainer when imported, so import only the one you use:
``import rlvr_boundary.shaping.adapters.verl`` registers the estimators and the
policy loss with verl; ``from rlvr_boundary.shaping.adapters.trl import
ShapedGRPOTrainer`` gives the TRL trainer subclass.
"""
