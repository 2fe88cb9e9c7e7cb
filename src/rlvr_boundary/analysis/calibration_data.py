"""Measured figures the tool quotes, written by benchmarks/calibration.py: do not edit.

Regenerate with ``python benchmarks/calibration.py`` (see docs/statistics.md).
"""

GENERATED = {"command": "python benchmarks/calibration.py --subsamples 60 --pilots 2 --studies 200", "cpu_s": 1233, "date": "2026-12-04", "machine": "2 CPUs, Python 3.11.7, numpy 2.4.6", "workers": 2}

#: Coverage of the plain band as compare draws it, by prompts (DeepScaleR population).
BAND = {"level": 0.95, "independent": {30: {"coverage": 0.852, "mc_se": 0.0112, "reps": 1000}, 50: {"coverage": 0.944, "mc_se": 0.0073, "reps": 1000}, 100: {"coverage": 0.96, "mc_se": 0.0062, "reps": 1000}, 200: {"coverage": 0.931, "mc_se": 0.008, "reps": 1000}, 1000: {"coverage": 0.95, "mc_se": 0.0069, "reps": 1000}}}

#: Coverage of the extrapolation intervals at the largest predicted budget, by case.
EXTRAPOLATION = [{"truth": "DeepScaleR", "prompts": 1060, "m": 8, "k_max": 128, "coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "min_coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "cases": 60, "zero_share": [0.19716981132075473, 0.22452830188679246]}, {"truth": "DeepScaleR", "prompts": 1060, "m": 16, "k_max": 128, "coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "min_coverage": {"base": 1.0, "rl": 0.9833, "diff": 1.0}, "cases": 60, "zero_share": [0.17264150943396225, 0.18867924528301888]}, {"truth": "DeepScaleR", "prompts": 1060, "m": 32, "k_max": 128, "coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "min_coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "cases": 60, "zero_share": [0.15283018867924528, 0.1669811320754717]}, {"truth": "DeepScaleR", "prompts": 100, "m": 16, "k_max": 128, "coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "min_coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "cases": 60, "zero_share": [0.1, 0.24]}, {"truth": "heavy tail 20%", "prompts": 500, "m": 16, "k_max": 1024, "coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "min_coverage": {"base": 0.9833, "rl": 1.0, "diff": 0.9833}, "cases": 60, "zero_share": [0.288, 0.36]}, {"truth": "heavy tail 25%", "prompts": 300, "m": 8, "k_max": 512, "coverage": {"base": 1.0, "rl": 1.0, "diff": 1.0}, "min_coverage": {"base": 0.9825, "rl": 1.0, "diff": 1.0}, "cases": 60, "zero_share": [0.37666666666666665, 0.47]}]

#: Coverage of the band under verifier error (compare --verifier-error).
VERIFIER = {"coverage": 0.905, "fn": 0.05, "fp": 0.02, "level": 0.95, "mc_se": 0.0207, "n": 32, "prompts": 300, "refits": 100, "reps": 200}
