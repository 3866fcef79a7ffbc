"""The strongest cheap baselines beside every result: aeon's MiniRocket and
MultiRocket-Hydra, on the same windows, folds and training-fold statistics as medspt's
models (input rules: :mod:`medspt.baselines._base`).

>>> from medspt.baselines import MiniRocket
>>> proba = MiniRocket(random_state=0).fit(X_train, y_train).predict_proba(X_test)

``medspt.evaluate`` runs ``baselines=("minirocket",)`` by default; their rows are named
after the baseline and have no depth.
"""

from __future__ import annotations

from collections.abc import Sequence

from medspt.baselines._base import RocketBaseline
from medspt.baselines.minirocket import MiniRocket
from medspt.baselines.multirocket_hydra import MultiRocketHydra
from medspt.core.errors import InputError

__all__ = ["BASELINES", "MiniRocket", "MultiRocketHydra", "RocketBaseline", "check_baselines",
           "make_baseline"]  # fmt: skip

BASELINES: dict[str, type[RocketBaseline]] = {
    "minirocket": MiniRocket,
    "multirocket-hydra": MultiRocketHydra,
}
NAMES = {"minirocket": "MiniRocket", "multirocket-hydra": "MultiRocket-Hydra"}


def check_baselines(names: Sequence[str] | str | None) -> tuple[str, ...]:
    """Baseline names as a tuple, each one of :data:`BASELINES` (else an
    :class:`~medspt.InputError` naming the choices)."""
    if names is None:
        return ()
    if isinstance(names, str):
        names = (names,)
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise InputError(
            f"unknown baseline(s) {unknown}: choose from {sorted(BASELINES)} "
            "(baselines=(...)), or none (baselines=())"
        )
    return tuple(dict.fromkeys(names))


def make_baseline(name: str, random_state: int = 0, n_jobs: int = 1) -> RocketBaseline:
    """A fresh, unfitted baseline by name (:data:`BASELINES`)."""
    (name,) = check_baselines(name)
    return BASELINES[name](random_state=random_state, n_jobs=n_jobs)
