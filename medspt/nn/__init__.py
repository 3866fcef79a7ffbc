"""The model layer: the Transformer and how it is trained.

- :mod:`medspt.nn.model`: the whole model in one file (``ModelConfig``,
  ``SPTTransformer``, tokenizers, positions, attention registry);
- :mod:`medspt.nn.attention` and :mod:`medspt.nn.kernels`: hierarchical attention and
  its Numba CPU / CUDA index build;
- :mod:`medspt.nn.masking`: the four masking strategies of self-pretraining;
- :mod:`medspt.nn.augment`: augmentation of training windows;
- :mod:`medspt.nn.training`: the pretraining and fine-tuning loops.
"""
