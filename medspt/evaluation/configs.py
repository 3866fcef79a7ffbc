"""The configurations of the capacity-versus-pretraining grid, as estimator parameters.

A configuration is ``scratch``, ``scratch-long``, ``scratch-alibi`` (label-only
controls) or ``spt-<masking>`` (self-pretrained), at a depth and with a seed; the
evaluation (:func:`medspt.evaluate`), the refit of a chosen configuration and the
Optuna study all turn these names into :class:`~medspt.SPTClassifier` parameters here.
"""

from __future__ import annotations

from medspt.core.errors import InputError
from medspt.estimator.classifier import SPTClassifier

__all__ = ["CONTROLS", "config_params"]

# Label-only configurations: ``scratch`` has the fine-tuning budget of SPT;
# ``scratch-long`` trains for SPT's whole budget (pretraining + fine-tuning epochs, same
# batch size: the same number of optimizer steps), so "SPT helps" cannot mean "SPT
# trained longer"; ``scratch-alibi`` adds ALiBi's proximity bias.
CONTROLS = ("scratch", "scratch-long", "scratch-alibi")


def config_params(config: str, depth: int, seed: int, params: dict | None = None) -> dict:
    """Estimator parameters of one configuration of the capacity-versus-pretraining grid.

    ``config`` is ``"scratch"``, ``"scratch-long"``, ``"scratch-alibi"`` or
    ``"spt-<masking>"``; ``params`` are the settings every configuration shares (the
    estimator's defaults fill the rest).
    """
    params = dict(params or {})
    out = dict(params, depth=int(depth), random_state=int(seed))
    if config in CONTROLS:
        out["pretrain"] = False
        if config == "scratch-long":
            # every epoch runs (no early stop; the best validation epoch's weights are
            # still kept), so the control never gets fewer steps than SPT, whose
            # fine-tuning may stop early
            defaults = SPTClassifier().get_params()
            out["epochs"] = int(params.get("epochs", defaults["epochs"])) + int(
                params.get("pretrain_epochs", defaults["pretrain_epochs"])
            )
            # SPT's two stages each get the step floor, so the control gets it twice
            out["min_steps"] = 2 * int(params.get("min_steps", defaults["min_steps"]))
            out["patience"] = None
        if config == "scratch-alibi":
            out["positional"] = "alibi"
        return out
    if not config.startswith("spt-"):
        raise InputError(f"configuration {config!r} is not one of {CONTROLS} or 'spt-<masking>'")
    out["pretrain"] = True
    out.setdefault("masking", config.removeprefix("spt-"))
    return out
