"""Two models with the same weights for inputs of two lengths, shared by the tests that
check that padding never changes a model's output."""

import torch

from medspt.nn.model import ModelConfig, SPTTransformer


def same_weights(short: int, long: int, **config) -> tuple[SPTTransformer, SPTTransformer]:
    """Models for ``short`` and ``long`` steps, in eval mode, with identical weights (the
    long model's learned position table starts with the short model's rows)."""
    torch.manual_seed(0)
    a = SPTTransformer(ModelConfig(n_steps=short, **config)).eval()
    b = SPTTransformer(ModelConfig(n_steps=long, **config)).eval()
    sa, sb = a.state_dict(), b.state_dict()
    for k in sb:
        if k == "pos":  # learned table: the first rows are the short model's
            sb[k] = torch.cat([sa[k], sb[k][:, sa[k].shape[1] :]], dim=1)
        else:
            sb[k] = sa[k]
    b.load_state_dict(sb)
    return a, b
