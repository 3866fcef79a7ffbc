"""What every layer of medspt shares, depending on none of them.

- :mod:`medspt.core.splits`: subject-wise outer folds, inner validation subjects, fold
  checks;
- :mod:`medspt.core.stats`: per-channel statistics and balanced class weights from
  training windows;
- :mod:`medspt.core.tables`: reading a long table from a file;
- :mod:`medspt.core.jsonable`: numpy values to plain JSON;
- :mod:`medspt.core.urls`: storage URLs shown without their password;
- :mod:`medspt.core.warn`: warnings at the user's call site, once per top-level call;
- :mod:`medspt.core.host_syncs`: counting the calls that make the host wait for a GPU.

Modules here import only the standard library, numpy, pandas, scikit-learn (torch for
:mod:`~medspt.core.host_syncs`) and :mod:`medspt.core.errors`; everything else in medspt (data,
estimator, API, studies, command line, benchmarks) may import them. A test of the import
graph keeps it that way.
"""
