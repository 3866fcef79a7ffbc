"""The study's grid: its cells, the order they run in, and the sampler that knows them.

One cell is ``(depth, config, seed)`` with config ``"scratch"``, ``"scratch-long"``,
``"scratch-alibi"``, ``"spt-<masking>"`` or a baseline (``"minirocket"``,
:mod:`medspt.baselines`); a baseline has no depth, so its cell (one per seed) carries the
grid's first depth as a placeholder and its rows have none. A study stores its grid in its user
attributes (``attrs["grid"]``); :func:`study_cells` and :func:`search_space` read it
back, so every worker that joins a study runs the same cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import optuna

from medspt.evaluation.configs import config_params

__all__ = [
    "Cell",
    "CellGridSampler",
    "grid_cells",
    "grid_configs",
    "search_space",
    "study_cells",
]


@dataclass(frozen=True)
class Cell:
    """One point of the grid."""

    depth: int
    config: str  # "scratch" or "spt-<masking>"
    seed: int

    @property
    def params(self) -> dict:
        return {"depth": self.depth, "config": self.config, "seed": self.seed}

    @property
    def key(self) -> str:
        return f"depth{self.depth}-{self.config}-seed{self.seed}"

    def estimator_params(self, shared: dict | None = None) -> dict:
        """Estimator parameters of this cell on top of the study's ``shared`` ones."""
        return config_params(self.config, self.depth, self.seed, shared)


def grid_configs(
    maskings: Sequence[str],
    scratch: bool,
    alibi: bool = False,
    scratch_long: bool = False,
    baselines: Sequence[str] = (),
) -> list[str]:
    """Configuration names: ``scratch``, ``scratch-long`` (label-only for SPT's whole
    budget of optimizer steps), ``scratch-alibi`` (label-only with ALiBi positions),
    ``spt-<masking>`` for each masking, then the baselines."""
    return (
        (["scratch"] if scratch else [])
        + (["scratch-long"] if scratch_long else [])
        + (["scratch-alibi"] if alibi else [])
        + [f"spt-{m}" for m in maskings]
        + list(baselines)
    )


def grid_cells(
    depths: Sequence[int],
    maskings: Sequence[str],
    scratch: bool,
    seeds: Sequence[int],
    alibi: bool = False,
    scratch_long: bool = False,
    baselines: Sequence[str] = (),
) -> list[Cell]:
    """Every cell, ordered by seed, then depth, then configuration, each seed's baselines
    (at the first depth, their placeholder) after its models: a study that stops early (or
    is watched while it runs) has covered the whole grid once before it repeats it with
    the next seed."""
    configs = grid_configs(maskings, scratch, alibi, scratch_long)
    return [
        cell
        for s in seeds
        for cell in [Cell(int(d), c, int(s)) for d in depths for c in configs]
        + [Cell(int(depths[0]), b, int(s)) for b in baselines]
    ]


def search_space(attrs: dict) -> dict:
    """The values of each trial parameter in a study's grid (``attrs``: the study's
    ``medspt`` user attribute), as Optuna's ``GridSampler`` takes them."""
    g = attrs["grid"]
    configs = grid_configs(
        g["maskings"],
        g["scratch"],
        g.get("alibi", False),
        g.get("scratch_long", False),
        g.get("baselines", ()),
    )
    return {"depth": list(g["depths"]), "config": configs, "seed": list(g["seeds"])}


def study_cells(attrs: dict) -> list[Cell]:
    """Every cell of a study's grid, in the order workers run them (:func:`grid_cells`);
    grids stored before ``alibi``, ``scratch_long`` or ``baselines`` existed have none."""
    g = attrs["grid"]
    return grid_cells(
        g["depths"],
        g["maskings"],
        g["scratch"],
        g["seeds"],
        g.get("alibi", False),
        g.get("scratch_long", False),
        g.get("baselines", ()),
    )


class CellGridSampler(optuna.samplers.GridSampler):
    """The grid of a study whose cells the worker loop enqueues one by one.

    Enqueued cells are tagged with their grid id like sampled ones (optuna leaves them
    untagged), and the study is never stopped by the sampler: the worker loop knows when
    every cell is complete, including retries of failed ones.
    """

    def before_trial(self, study, trial) -> None:
        fixed = trial.system_attrs.get("fixed_params")
        if fixed and "grid_id" not in trial.system_attrs:
            values = [fixed.get(name) for name in self._param_names]
            for grid_id, grid in enumerate(self._all_grids):
                if list(grid) == values:
                    study._storage.set_trial_system_attr(
                        trial._trial_id, "search_space", self._search_space
                    )
                    study._storage.set_trial_system_attr(trial._trial_id, "grid_id", grid_id)
                    return
        super().before_trial(study, trial)

    def after_trial(self, study, trial, state, values) -> None:
        pass  # the worker loop decides when the grid is done
