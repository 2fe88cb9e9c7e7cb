"""Measured figures the tool quotes, written by benchmarks/calibration.py: do not edit.

Regenerate with ``python benchmarks/calibration.py`` (see docs/statistics.md).
"""

GENERATED = {"command": "python benchmarks/calibration.py", "cpu_s": 279, "date": "2026-12-03", "machine": "2 CPUs, Python 3.11.7, numpy 2.4.6", "workers": 2}

#: Coverage of the plain band as compare draws it, by prompts (DeepScaleR population).
BAND = {"level": 0.95, "independent": {30: {"coverage": 0.852, "mc_se": 0.0112, "reps": 1000}, 50: {"coverage": 0.944, "mc_se": 0.0073, "reps": 1000}, 100: {"coverage": 0.96, "mc_se": 0.0062, "reps": 1000}, 200: {"coverage": 0.931, "mc_se": 0.008, "reps": 1000}, 1000: {"coverage": 0.95, "mc_se": 0.0069, "reps": 1000}}}

#: Coverage of the extrapolation intervals at the largest predicted budget, by case.
EXTRAPOLATION = []

#: Coverage of the band under verifier error (compare --verifier-error).
VERIFIER = {"coverage": 0.905, "fn": 0.05, "fp": 0.02, "level": 0.95, "mc_se": 0.0207, "n": 32, "prompts": 300, "refits": 100, "reps": 200}
