"""The data layer: long DataFrames of recordings to windows a model can use.

- :mod:`medspt.data.channels`: which columns are channels, and why the others are not;
- :mod:`medspt.data.sampling`: sampling rates and unit mix-ups;
- :mod:`medspt.data.timing`: irregular timestamps;
- :mod:`medspt.data.preprocess`: filters and resampling (mne);
- :mod:`medspt.data.windowing`: cutting recordings into windows, as named steps;
- :mod:`medspt.data.windowset`: the :class:`WindowSet` and ``make_windows``;
- :mod:`medspt.data.summary`: what a model is trained on, in words;
- :mod:`medspt.data.synthetic`: the built-in demo data.

Dataset loaders and fixed protocols live in :mod:`medspt.datasets`.
"""

from medspt.data.windowset import WindowSet, WindowSpec, from_arrays, infer_channels, make_windows

__all__ = ["WindowSet", "WindowSpec", "make_windows", "from_arrays", "infer_channels"]
