"""Early stopping only on enough validation subjects, and the score nested selection
reads is the kept epoch's (not the best over more epochs)."""

import numpy as np
import pytest
from conftest import FAST

from medspt import SPTClassifier
from medspt.api import val_score

# no pretraining; a long patience so that stopping, when it happens, is the rule's doing
PARAMS = {**FAST, "pretrain": False, "epochs": 12, "batch_size": 16, "patience": 1}


def _fit(arrays, **kw) -> SPTClassifier:
    X, y, groups = arrays
    return SPTClassifier(**{**PARAMS, **kw}, random_state=0).fit(X, y, groups=groups)


def test_too_few_validation_subjects_run_every_epoch_and_keep_the_last(arrays):
    clf = _fit(arrays, min_val_subjects=3)  # 8 subjects: 2 held out
    assert len(clf.validation_subjects_) == 2
    hist = clf.history_["finetune"]
    assert len(hist) == 12 and clf.best_epoch_["finetune"] == 12
    assert all("val_balanced_accuracy" in r for r in hist)  # still scored
    assert val_score(clf) == pytest.approx(hist[-1]["val_balanced_accuracy"])


def test_enough_validation_subjects_stop_early_and_keep_the_best(arrays):
    clf = _fit(arrays, min_val_subjects=2)
    hist = clf.history_["finetune"]
    kept = clf.best_epoch_["finetune"]
    assert len(hist) < 12  # patience 1 stops it
    assert kept < len(hist)
    assert val_score(clf) == pytest.approx(hist[kept - 1]["val_balanced_accuracy"])


def test_val_score_is_the_kept_epochs_not_the_best_over_epochs(arrays):
    clf = _fit(arrays, min_val_subjects=3)
    hist = clf.history_["finetune"]
    hist[3]["val_balanced_accuracy"] = 2.0  # an impossible maximum on an epoch not kept
    assert val_score(clf) == hist[-1]["val_balanced_accuracy"] < 2.0
    clf.best_epoch_["finetune"] = 4
    assert val_score(clf) == 2.0


def test_min_val_subjects_is_checked_by_name(arrays):
    with pytest.raises(Exception, match="min_val_subjects"):
        _fit(arrays, min_val_subjects=-1)
    assert np.isnan(val_score(_fit(arrays, val_size=0.0)))
