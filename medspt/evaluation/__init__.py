"""The evaluation layer: honest numbers about fitted models.

- :mod:`medspt.evaluation.configs`: the grid's configurations (scratch, scratch-long, SPT);
- :mod:`medspt.evaluation.results`: ``Results`` and its out-of-fold views;
- :mod:`medspt.evaluation.statistics`: paired tests over subjects, intervals, Holm;
- :mod:`medspt.evaluation.choice` and :mod:`medspt.evaluation.selection`: choosing a
  configuration on validation subjects, and refitting it;
- :mod:`medspt.evaluation.comparisons`, :mod:`medspt.evaluation.markdown_tables`,
  :mod:`medspt.evaluation.report_text`, :mod:`medspt.evaluation.result_files`: tables,
  sentences and files for readers;
- :mod:`medspt.evaluation.plots`: figures (they take data frames, nothing else);
- :mod:`medspt.evaluation.probes`: confound probes; :mod:`medspt.evaluation.diagnostics`:
  attention diagnostics; :mod:`medspt.evaluation.versus`: medspt against a baseline.

The one-call entry points ``fit_spt`` and ``evaluate`` are in :mod:`medspt.api`.
"""
