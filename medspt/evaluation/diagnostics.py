"""Attention-proximity diagnostics: does a model attend to nearby tokens, and did its
positional encoding become a proximity bias?

A companion analysis of self-pretraining found that label supervision alone struggles to
learn query-key *proximity* patterns, and that masked reconstruction teaches them by
turning absolute positions into proximity-biased scores. Two measurements show this for
any fitted model:

* :func:`attention_profile` — what the model does on data: per layer and head, the mean
  attention weight at each token distance ``|Δ|`` (averaged over the pairs at that
  distance), the mean attention distance next to uniform attention's ``(N²−1)/(3N)``, and
  a locality ratio: the attention mass within ``|Δ| ≤ w`` divided by ``(2w+1)/N`` (1 for
  uniform attention, larger when attention stays close).
* :func:`positional_score` — what the positions alone do, without input: the score
  ``S(i, j) = (W_Q·LN(p_i))·(W_K·LN(p_j))/√d_h`` of position embeddings ``p`` through each
  layer's first LayerNorm and query/key weights (biases left out), with its Spearman
  correlation to ``−|i−j|`` and the slope of its mean over distance. ρ near 1 and a
  negative slope: positions have become a proximity bias. For ``positional="alibi"`` the
  score is the bias itself, ``−m_h·|i−j|``.

Distances count patch tokens (``patch_len`` time steps each); a class token is left out
and the remaining weights of each row are renormalized. Padding (shorter cases in a
batch) is never a query or a key: each token's row is averaged over the windows in which
it is real.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from scipy.stats import spearmanr

from medspt.core.errors import InputError
from medspt.data.windowset import WindowSet
from medspt.estimator.classifier import SPTClassifier
from medspt.evaluation.plots import plot_distance_profiles, plot_positional_score
from medspt.nn.model import SPTTransformer, alibi_slopes

__all__ = [
    "AttentionProfile",
    "PositionalScore",
    "attention_maps",
    "attention_profile",
    "profile_from_maps",
    "positional_score",
    "uniform_distance",
    "write_diagnostics",
]


def uniform_distance(n: int) -> float:
    """Mean ``|i − j|`` under uniform attention over ``n`` tokens: ``(n² − 1) / (3n)``."""
    return (n * n - 1) / (3 * n)


def _distances(n: int) -> np.ndarray:
    i = np.arange(n)
    return np.abs(i[:, None] - i[None, :])  # (n, n)


@dataclass
class AttentionProfile:
    """Distance statistics of attention maps, per layer and head.

    Attributes
    ----------
    profile : ndarray, shape (L, H, N)
        Mean attention weight at token distance ``|Δ| = 0 … N−1`` (uniform: ``1/N``).
    mean_distance : ndarray, shape (L, H)
        Mean ``|i − j|`` under the attention of each query, averaged over queries.
    locality_ratio : ndarray, shape (L, H)
        Attention mass within ``|Δ| ≤ w``, divided by ``(2w+1)/N``.
    n_tokens, w : int
        Tokens per window and the locality radius.
    n_windows : int
        Windows the maps were averaged over.
    """

    profile: np.ndarray
    mean_distance: np.ndarray
    locality_ratio: np.ndarray
    n_tokens: int
    w: int
    n_windows: int = 0

    @property
    def uniform_distance(self) -> float:
        return uniform_distance(self.n_tokens)

    def summary(self) -> pd.DataFrame:
        """One row per layer and head (layers and heads count from 0)."""
        L, H = self.mean_distance.shape
        return pd.DataFrame(
            {
                "layer": np.repeat(np.arange(L), H),
                "head": np.tile(np.arange(H), L),
                "mean_distance": self.mean_distance.ravel(),
                "uniform_distance": self.uniform_distance,
                "distance_ratio": self.mean_distance.ravel() / self.uniform_distance,
                "locality_ratio": self.locality_ratio.ravel(),
            }
        )

    def overall(self) -> dict:
        """Means over layers and heads: what the study report shows per model."""
        return {
            "attention_distance": float(self.mean_distance.mean()),
            "uniform_distance": self.uniform_distance,
            "locality_ratio": float(self.locality_ratio.mean()),
        }


def profile_from_maps(maps: np.ndarray, w: int = 1, n_windows: int = 0) -> AttentionProfile:
    """Distance statistics of attention maps ``(L, H, N, N)`` (rows summing to 1)."""
    A = np.asarray(maps, dtype=np.float64)
    if A.ndim == 2:
        A = A[None, None]
    if A.ndim != 4 or A.shape[-1] != A.shape[-2]:
        raise InputError(f"maps must have shape (L, H, N, N), got {np.shape(maps)}")
    if not (isinstance(w, (int, np.integer)) and w >= 0):
        raise InputError(f"w must be a non-negative integer, got {w!r}")
    # rows that are NaN are tokens that were padding in every window: left out, and the
    # sequence is as long as the tokens that were real somewhere
    real = ~np.isnan(A).any(axis=(0, 1, 3))  # (N,)
    A = A[..., real, :][..., real]
    N = int(real.sum())
    D = _distances(N)
    counts = np.bincount(D.ravel(), minlength=N)  # pairs at each distance
    flat = A.reshape(-1, N * N)
    profile = np.stack([np.bincount(D.ravel(), weights=r, minlength=N) for r in flat])
    profile = (profile / counts).reshape(*A.shape[:2], N)
    mean_distance = (A * D).sum(-1).mean(-1)  # (L, H)
    local = (A * (D <= w)).sum(-1).mean(-1)
    ratio = local / min(1.0, (2 * w + 1) / N)
    return AttentionProfile(profile, mean_distance, ratio, N, int(w), n_windows)


def _model_and_inputs(model, X) -> tuple[SPTTransformer, torch.Tensor | None]:
    """The torch model and, if ``X`` is given, the windows as the model sees them."""
    if isinstance(model, SPTClassifier):
        if not hasattr(model, "model_"):
            raise InputError("the SPTClassifier is not fitted; call fit first")
        net = model.model_
        if isinstance(X, pd.DataFrame):
            X = model.frame_windows(X).X
        if X is not None:
            X, _ = model.model_windows(X)  # (M, C, n_steps_), as the model sees them
            X = torch.from_numpy(X)
        return net, X
    if not isinstance(model, SPTTransformer):
        raise InputError(
            f"model must be a fitted SPTClassifier or an SPTTransformer, got {type(model).__name__}"
        )
    if X is not None:
        X = X.X if isinstance(X, WindowSet) else X
        X = torch.as_tensor(np.asarray(X, dtype=np.float32))
        cfg = model.config
        if X.ndim != 3 or X.shape[1] != cfg.n_channels or X.shape[2] != cfg.n_steps:
            raise InputError(
                f"X must have shape (N, {cfg.n_channels}, {cfg.n_steps}) for this model, "
                f"got {tuple(X.shape)}"
            )
    return model, X


def attention_maps(
    model, X, *, max_windows: int | None = 512, batch_size: int = 64, seed: int = 0
) -> np.ndarray:
    """Mean attention maps over windows, ``(L, H, N, N)``, between patch tokens.

    Parameters
    ----------
    model : SPTClassifier or SPTTransformer
        A fitted classifier (its normalization is applied to ``X``) or a torch model
        (``X`` already normalized).
    X : array (n, C, T), WindowSet or long DataFrame
        Windows to run the model on (a DataFrame is cut as the classifier's training
        frame was; see :meth:`SPTClassifier.frame_windows`).
    max_windows : int or None
        A seeded random subset of at most this many windows (None = all).
    """
    return _maps(model, X, max_windows, batch_size, seed)[0]


def _maps(model, X, max_windows, batch_size, seed) -> tuple[np.ndarray, int]:
    net, Xt = _model_and_inputs(model, X)
    if Xt is None or len(Xt) == 0:
        raise InputError("X holds no windows")
    if max_windows is not None and len(Xt) > max_windows:
        pick = np.sort(np.random.default_rng(seed).choice(len(Xt), max_windows, replace=False))
        Xt = Xt[torch.from_numpy(pick)]
    for block in net.blocks:
        if not hasattr(block.attn.attend, "attention_weights"):
            raise InputError(
                f"attention {type(block.attn.attend).__name__} cannot report its weights"
            )
    sums = [None] * len(net.blocks)
    n_queries = [0]  # per token: windows in which it is a real (not padding) query

    def hook(i):
        def record(module, args, output):
            q, k = args[0], args[1]
            pad = args[3] if len(args) > 3 else None
            real = torch.ones(q.shape[0], q.shape[2], dtype=q.dtype, device=q.device)
            if pad is not None:
                real = (~pad).to(q.dtype)  # (B, N): padding queries are not counted
            A = (module.attention_weights(q, k, pad) * real[:, None, :, None]).sum(0)
            sums[i] = A if sums[i] is None else sums[i] + A  # (H, N, N)
            if i == 0:
                n_queries[0] = n_queries[0] + real.sum(0)

        return record

    handles = [b.attn.attend.register_forward_hook(hook(i)) for i, b in enumerate(net.blocks)]
    was_training = net.training
    dev = next(net.parameters()).device
    net.eval()
    try:
        with torch.no_grad():
            for i in range(0, len(Xt), batch_size):
                net.encode(Xt[i : i + batch_size].to(dev))
    finally:
        for h in handles:
            h.remove()
        net.train(was_training)
    counts = n_queries[0].double().cpu().numpy()  # (N,)
    with np.errstate(invalid="ignore", divide="ignore"):
        # mean over the windows where each query is real; never-real rows are NaN
        A = torch.stack(sums).double().cpu().numpy() / counts[:, None]  # (L, H, N, N)
    if net.config.pooling == "cls":  # drop the class token, renormalize the rows
        A = A[..., 1:, 1:]
        A = A / np.clip(A.sum(-1, keepdims=True), 1e-12, None)
    return A, len(Xt)


def attention_profile(
    model, X, *, w: int = 1, max_windows: int | None = 512, batch_size: int = 64, seed: int = 0
) -> AttentionProfile:
    """Distance profile, mean attention distance and locality ratio of a model on ``X``.

    Works for full and hierarchical attention (hierarchical maps spread each pooled
    entry's weight evenly over the tokens it covers). See :func:`attention_maps` for the
    arguments; ``w`` is the locality radius in tokens.

    Examples
    --------
    >>> prof = attention_profile(clf, windows.X)           # doctest: +SKIP
    >>> prof.summary()                                      # doctest: +SKIP
    """
    maps, n = _maps(model, X, max_windows, batch_size, seed)
    return profile_from_maps(maps, w=w, n_windows=n)


@dataclass
class PositionalScore:
    """Input-free positional attention scores of a model.

    Attributes
    ----------
    scores : ndarray, shape (L, H, N, N)
        ``S(i, j)`` per layer and head.
    spearman : ndarray, shape (L, H)
        Spearman correlation of ``S(i, j)`` with ``−|i − j|`` over all pairs.
    slope : ndarray, shape (L, H)
        Least-squares slope of the mean score at each distance over the distance
        (negative: nearer positions score higher).
    positional : str
        The model's positional encoding.
    """

    scores: np.ndarray
    spearman: np.ndarray
    slope: np.ndarray
    positional: str

    def summary(self) -> pd.DataFrame:
        L, H = self.spearman.shape
        return pd.DataFrame(
            {
                "layer": np.repeat(np.arange(L), H),
                "head": np.tile(np.arange(H), L),
                "spearman": self.spearman.ravel(),
                "slope": self.slope.ravel(),
            }
        )


def score_statistics(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman ρ with ``−|i−j|`` and the slope over distance of score maps
    ``(L, H, N, N)``; both ``(L, H)``."""
    S = np.asarray(scores, dtype=np.float64)
    N = S.shape[-1]
    D = _distances(N)
    counts = np.bincount(D.ravel(), minlength=N)
    rho = np.full(S.shape[:2], np.nan)
    slope = np.full(S.shape[:2], np.nan)
    for li in range(S.shape[0]):
        for h in range(S.shape[1]):
            s = S[li, h]
            if N > 1 and np.ptp(s) > 0:
                rho[li, h] = spearmanr(s.ravel(), -D.ravel()).statistic
            by_d = np.bincount(D.ravel(), weights=s.ravel(), minlength=N) / counts
            if N > 1:
                slope[li, h] = np.polyfit(np.arange(N), by_d, 1)[0]
    return rho, slope


def positional_score(model) -> PositionalScore:
    """Positional attention score of every layer and head of a model (no input needed).

    Parameters
    ----------
    model : SPTClassifier or SPTTransformer
        With ``positional`` ``"learned"``, ``"sinusoidal"``, ``"alibi"`` or
        ``"relative"`` (the learned bias of each layer and head by token distance).
    """
    net, _ = _model_and_inputs(model, None)
    cfg = net.config
    H, Dh = cfg.n_heads, cfg.d_model // cfg.n_heads
    N = cfg.n_patches
    if cfg.positional == "none":
        raise InputError("positional='none': the model has no positions to score")
    if cfg.positional == "alibi":
        bias = -alibi_slopes(H).double().numpy()[:, None, None] * _distances(N)
        scores = np.broadcast_to(bias, (cfg.depth, H, N, N)).copy()
    elif cfg.positional == "relative":
        off = int(cfg.pooling == "cls")
        with torch.no_grad():
            maps = [b.attn.rel(N + off)[:, off:, off:].detach().cpu() for b in net.blocks]
        scores = torch.stack(maps).double().numpy()  # (L, H, N, N)
    else:
        off = int(cfg.pooling == "cls")
        with torch.no_grad():
            p = net.pos[0, off : off + N].detach().cpu()  # (N, D)
            out = []
            for block in net.blocks:
                ln = block.ln1
                x = torch.nn.functional.layer_norm(
                    p, ln.normalized_shape, ln.weight.cpu(), ln.bias.cpu(), ln.eps
                )
                W = block.attn.qkv.weight.detach().cpu()  # (3D, D)
                q = (x @ W[: cfg.d_model].T).view(N, H, Dh).transpose(0, 1)  # (H, N, Dh)
                k = (x @ W[cfg.d_model : 2 * cfg.d_model].T).view(N, H, Dh).transpose(0, 1)
                out.append(q @ k.transpose(1, 2) / math.sqrt(Dh))  # (H, N, N)
        scores = torch.stack(out).double().numpy()
    rho, slope = score_statistics(scores)
    return PositionalScore(scores, rho, slope, cfg.positional)


def write_diagnostics(
    models: dict, X, out, *, w: int = 1, max_windows: int | None = 512, title: str = ""
) -> pd.DataFrame:
    """Diagnose several models on the same data and write tables and figures to ``out``.

    Parameters
    ----------
    models : dict
        Name → fitted :class:`~medspt.SPTClassifier` (e.g. ``{"scratch": a, "spt-span": b}``).
    X : array, WindowSet or long DataFrame, or dict name → one of these
        The windows (or frame) each model is run on.
    out : path
        Folder for ``summary.md``, ``attention_profile.csv`` (per layer and head),
        ``distance_profile.csv`` (weight per distance, mean over heads),
        ``positional_score.csv``, ``distance_profiles.png`` and
        ``positional_<name>.png``.

    Returns
    -------
    DataFrame
        One row per model: depth, positional encoding, mean attention distance, uniform
        distance, locality ratio, mean Spearman ρ and slope of the positional score.
    """
    from pathlib import Path

    if not models:
        raise InputError("models is empty")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    profiles, per_head, per_dist, pos_rows, rows = {}, [], [], [], []
    for name, model in models.items():
        data = X[name] if isinstance(X, dict) else X
        prof = attention_profile(model, data, w=w, max_windows=max_windows)
        profiles[name] = prof
        per_head.append(prof.summary().assign(model=name))
        mean_prof = prof.profile.mean(1)  # (L, N)
        for layer, y in enumerate(mean_prof):
            per_dist.append(
                pd.DataFrame(
                    {"model": name, "layer": layer, "distance": np.arange(len(y)), "weight": y}
                )
            )
        net, _ = _model_and_inputs(model, None)
        row = {"model": name, "depth": net.config.depth, "positional": net.config.positional}
        row |= prof.overall()
        row["n_windows"] = prof.n_windows
        if net.config.positional != "none":
            score = positional_score(model)
            pos_rows.append(score.summary().assign(model=name))
            row["positional_spearman"] = float(np.nanmean(score.spearman))
            row["positional_slope"] = float(np.nanmean(score.slope))
            plot_positional_score(
                score, out / f"positional_{_safe(name)}.png", f"{title} {name}: positional score"
            )
        rows.append(row)
    table = pd.DataFrame(rows)
    pd.concat(per_head).to_csv(out / "attention_profile.csv", index=False)
    pd.concat(per_dist).to_csv(out / "distance_profile.csv", index=False)
    if pos_rows:
        pd.concat(pos_rows).to_csv(out / "positional_score.csv", index=False)
    plot_distance_profiles(profiles, out / "distance_profiles.png", title or None)
    (out / "summary.md").write_text(_summary_markdown(table, w))
    return table


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name))


def _summary_markdown(table: pd.DataFrame, w: int) -> str:
    lines = [
        "# Attention-proximity diagnostics",
        "",
        "Mean attention distance in tokens (uniform attention: (N²−1)/(3N)); locality = "
        f"attention mass within |Δ| ≤ {w} divided by (2·{w}+1)/N (uniform: 1); positional ρ "
        "= Spearman correlation of the input-free positional score S(i, j) with −|i−j| "
        "(1: positions act as a proximity bias). Means over layers and heads.",
        "",
        "| model | depth | positional | attention distance | uniform | locality | "
        "positional ρ | positional slope |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in table.to_dict("records"):
        rho = r.get("positional_spearman", np.nan)
        slope = r.get("positional_slope", np.nan)
        lines.append(
            f"| {r['model']} | {r['depth']} | {r['positional']} | "
            f"{r['attention_distance']:.2f} | {r['uniform_distance']:.2f} | "
            f"{r['locality_ratio']:.2f} | {_fmt(rho)} | {_fmt(slope, 4)} |"
        )
    return "\n".join(lines) + "\n"


def _fmt(x, digits: int = 2) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"
