"""The registry of result kinds: what every result document the tool writes holds.

(Filled in below: one typed declaration per kind.)
"""

from __future__ import annotations

__all__ = ["upgrade", "check"]


def check(doc: dict) -> None:
    """Placeholder until the kinds are declared."""


def _gain_run_end(res: dict):
    """Last budget of the run of supported gains that starts at the first budget, or None."""
    ks = list(res["ks"])
    gains = res.get("gain_budgets") or []
    if not gains or gains[0] != ks[0]:
        return None
    end = gains[0]
    for k in gains[1:]:
        if ks.index(k) != ks.index(end) + 1:
            break
        end = k
    return end


def upgrade(doc: dict) -> dict:
    """A document of an older schema with the keys this version's words read, added in place.

    Schema 1.0 comparisons lack ``gain_run_end`` (the end of the run of supported
    gains from the first budget, which the headline says); it is derived here
    from the comparison's own ``ks`` and ``gain_budgets``, exactly as the
    analysis computes it now.
    """
    if str(doc.get("schema_version", "")).split(".")[:2] != ["1", "0"]:
        return doc
    comparisons = [doc] if doc.get("kind") == "compare" else \
        list((doc.get("comparisons") or {}).values()) if doc.get("kind") == "report" else []
    for c in comparisons:
        if "gain_run_end" not in c and c.get("band") is not None:
            c["gain_run_end"] = _gain_run_end(c)
    return doc
