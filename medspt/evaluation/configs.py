"""The configurations of the capacity-versus-pretraining grid, as estimator parameters.

A configuration is ``scratch``, ``scratch-long``, ``scratch-alibi`` (label-only
controls) or ``spt-<masking>`` (self-pretrained), at a depth and with a seed; the
evaluation (:func:`medspt.evaluate`), the refit of a chosen configuration and the
Optuna study all turn these names into :class:`~medspt.SPTClassifier` parameters here.
"""

from __future__ import annotations

from medspt.core.errors import InputError

__all__ = ["CONTROLS", "config_params"]

# Label-only configurations: ``scratch`` has the fine-tuning budget of SPT;
# ``scratch-long`` trains for SPT's whole resolved budget (``steps_like_spt``: its
# pretraining and fine-tuning epochs as SPT's fit resolves them, same batch size), so "SPT
# helps" cannot mean "SPT trained longer"; ``scratch-alibi`` adds ALiBi's proximity bias.
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
            # SPT's own resolved budget (both stages, each raised to the step floor) as its
            # schedule, with scratch's early stopping (patience) and no checkpoint kept from
            # inside warm-up (issue 59: with patience=None and the best epoch chosen on a
            # few validation subjects, the control kept warm-up checkpoints and scored
            # below scratch, so "SPT beat it" meant little)
            out["steps_like_spt"] = True
        if config == "scratch-alibi":
            out["positional"] = "alibi"
        return out
    if not config.startswith("spt-"):
        raise InputError(f"configuration {config!r} is not one of {CONTROLS} or 'spt-<masking>'")
    out["pretrain"] = True
    out.setdefault("masking", config.removeprefix("spt-"))
    return out
