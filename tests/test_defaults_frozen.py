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


def test_the_model_constants_are_hashed_and_the_issue_59_default_is_reproducible(monkeypatch):
    import json

    from medspt.estimator import defaults
    from medspt.nn.model import INSTANCE_FLOOR

    assert json.loads(defaults.params_json())["_model"] == {"instance_floor": INSTANCE_FLOOR}
    # without the instance floor (the model before issue 60) the hash is issue 59's, the
    # one its experiments' rows carry
    monkeypatch.setitem(defaults.MODEL_CONSTANTS, "instance_floor", 0.0)
    assert defaults.defaults_hash() == defaults.ISSUE_59_HASH == "8b5a2958"
    monkeypatch.setitem(defaults.MODEL_CONSTANTS, "instance_floor", 0.2)
    assert defaults.defaults_hash() not in (defaults.FROZEN_HASH, defaults.ISSUE_59_HASH)
