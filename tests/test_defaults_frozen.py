"""The default is frozen: the code's defaults hash to the declared FROZEN_HASH."""

from medspt import SPTClassifier
from medspt.estimator.defaults import FROZEN_HASH, default_params, defaults_hash


def test_code_defaults_equal_the_frozen_default():
    assert defaults_hash() == FROZEN_HASH, (
        "SPTClassifier's defaults changed, but the default is frozen (medspt/estimator/"
        "defaults.py): a new default needs a declared selection round and a new FROZEN_HASH"
    )


def test_the_hash_follows_every_setting():
    assert defaults_hash({"depth": 3}) != FROZEN_HASH
    assert defaults_hash({"patience": None}) != defaults_hash()
    assert default_params()["window_stats"] is True
    assert default_params({"depth": 4})["depth"] == 4
    assert set(default_params()) == set(SPTClassifier().get_params())
