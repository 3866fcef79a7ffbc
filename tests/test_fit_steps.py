"""The steps of SPTClassifier.fit, each on its own: parameter rules, split, sizes,
normalization, model config, and the training stages pretrain -> fine-tune -> recover."""

import numpy as np
import pytest
import torch
from conftest import FAST

from medspt import SPTClassifier
from medspt.core.errors import InputError
from medspt.core.params import Rule, check, integer, interval, one_of
from medspt.estimator.classifier import ESTIMATOR_RULES, TrainingData
from medspt.nn.model import MODEL_RULES, ModelConfig, SPTTransformer

HIER = dict(FAST, patch_len=2, attention="hierarchical", attention_options={"topk": 1, "tile": 2})


def _prepared(arrays, **params):
    """A classifier taken through the steps before training, its data and model config."""
    X, y, g = arrays
    clf = SPTClassifier(**{**FAST, **params})
    clf._check_params()
    X, y, g, _ = clf._validate_training_data(X, y, g)
    train, val = clf._split(y, g)
    clf._resolve_sizes(X, n_train=len(train))
    data = clf._normalize_split(X, y, train, val)
    return clf, data, clf._model_config(n_channels=X.shape[1], n_steps=X.shape[2])


# ---------------------------------------------------------------- parameter rules


def test_rules_name_the_parameter_the_expectation_and_the_value():
    assert integer(0).problem("min_steps", -1) == "min_steps must be an integer >= 0, got -1"
    assert integer(1).problem("depth", True) is not None  # a bool is not a count
    assert integer(1).problem("depth", np.int64(3)) is None
    assert interval("[0, 1)").problem("dropout", 1.0) == "dropout must lie in [0, 1), got 1.0"
    assert interval("(0, 1]").problem("scale", 1) is None
    assert interval("(0, 1]").problem("scale", 0) == "scale must lie in (0, 1], got 0"
    assert interval("[0, 1)", none=True).problem("p", None) is None
    assert interval("[0, 1)").problem("p", "0.5") is not None  # no TypeError escapes
    auto = integer(1).or_auto()
    assert auto.problem("batch_size", "auto") is None
    assert auto.problem("batch_size", 0) == "batch_size must be 'auto' or an integer >= 1, got 0"


def test_a_registry_rule_reads_the_registry_when_it_checks():
    names = ["a"]
    rule = one_of(lambda: tuple(names))
    assert rule.problem("kind", "b") == "kind must be one of ('a',), got 'b'"
    names.append("b")
    assert rule.problem("kind", "b") is None


def test_check_raises_the_first_problem_in_table_order_and_skips_absent_names():
    rules = {"a": integer(1), "b": Rule(lambda v: v > 0, "be positive")}
    check({"b": 1}, rules)  # "a" absent: not checked
    with pytest.raises(InputError, match="a must be an integer >= 1, got 0"):
        check({"b": -1, "a": 0}, rules)


def test_each_parameter_has_one_rule():
    params = set(SPTClassifier().get_params())
    # the names in both tables: the estimator's rule is the model's or "auto"
    assert set(ESTIMATOR_RULES) & set(MODEL_RULES) == {"patch_len", "positional"}
    assert ESTIMATOR_RULES["positional"].problem("positional", "auto") is None
    assert "positional must be" in ESTIMATOR_RULES["positional"].problem("positional", "near")
    assert ESTIMATOR_RULES["patch_len"].problem("patch_len", 0) == (
        "patch_len must be 'auto' or an integer >= 1, got 0"
    )
    unchecked = {"pretrain", "linear_probe", "no_decay_norms", "random_state", "verbose"}
    unchecked |= {"channel_groups"}  # needs the data's channels: checked when it is resolved
    checked_elsewhere = {"augment", "device"}  # by check_augment and resolve_device
    assert params - set(ESTIMATOR_RULES) - set(MODEL_RULES) == unchecked | checked_elsewhere


@pytest.mark.parametrize(
    "bad",
    [
        dict(dropout=1.0),
        dict(attn_dropout=-0.1),
        dict(pooling="max"),
        dict(attention="sparse"),
        dict(window_stats="yes"),
        dict(d_model=30, n_heads=4),
        dict(depth=0),
    ],
)
def test_the_estimator_and_the_model_config_give_one_message(arrays, bad):
    with pytest.raises(InputError) as from_config:
        ModelConfig(n_channels=3, n_steps=32, n_classes=2, **bad).validate()
    with pytest.raises(InputError) as from_estimator:
        SPTClassifier(**{**FAST, **bad})._check_params()
    assert str(from_estimator.value) == str(from_config.value)


def test_positional_takes_auto_in_the_estimator_only(arrays):
    with pytest.raises(InputError, match=r"positional must be one of \('learned'"):
        ModelConfig(n_channels=3, n_steps=32, n_classes=2, positional="auto").validate()
    with pytest.raises(InputError, match="positional must be 'auto' or one of .*got 'rotary'"):
        SPTClassifier(**{**FAST, "positional": "rotary"})._check_params()
    X, y, g = arrays
    full = SPTClassifier(**FAST, pretrain=False).fit(X, y, groups=g)
    assert full.positional_ == "relative" and full.auto_params_["positional"] == "relative"
    hier = SPTClassifier(**FAST, pretrain=False, attention="hierarchical").fit(X, y, groups=g)
    assert hier.positional_ == "learned" and hier.model_.config.positional == "learned"


# ---------------------------------------------------------------- split and sizes


def test_split_holds_out_whole_subjects(arrays):
    X, y, g = arrays
    clf = SPTClassifier(**FAST)
    train, val = clf._split(y, g)
    assert len(train) + len(val) == len(y) and len(val) > 0
    assert not set(g[train]) & set(g[val])
    assert set(clf.validation_subjects_) == set(g[val])
    none = SPTClassifier(**FAST, val_size=0)
    train, val = none._split(y, g)
    assert len(train) == len(y) and len(val) == 0 and len(none.validation_subjects_) == 0


def test_sizes_resolve_auto_from_the_data(arrays):
    X, _, _ = arrays
    clf = SPTClassifier(**{**FAST, "patch_len": "auto", "batch_size": "auto"})
    clf._resolve_sizes(X, n_train=64)
    assert (clf.n_steps_, clf.min_length_) == (32, 32)
    assert clf.auto_params_ == {
        "patch_len": clf.patch_len_,
        "batch_size": clf.batch_size_,
        "positional": "relative",
    }
    fixed = SPTClassifier(**FAST)
    fixed._resolve_sizes(X, n_train=64)
    assert (fixed.patch_len_, fixed.batch_size_) == (8, 32)
    assert fixed.auto_params_ == {"positional": "relative"}
    with pytest.raises(InputError, match=r"patch_len=40 is longer than the windows"):
        SPTClassifier(**{**FAST, "patch_len": 40})._resolve_sizes(X, n_train=64)


def test_stage_epochs_are_raised_to_reach_min_steps():
    clf = SPTClassifier(min_steps=10)
    clf.batch_size_ = 32
    assert clf._stage_epochs(3, n_train=64) == 5  # 2 steps an epoch
    assert clf._stage_epochs(7, n_train=64) == 7
    assert clf._stage_epochs(1, n_train=65) == 4  # a last, smaller batch is a step too


@pytest.mark.parametrize("min_steps", [600, 1500])
def test_scratch_long_never_gets_fewer_steps_than_spt(min_steps):
    # every steps-per-epoch from 1 to 200 with the step floor on (the old rule,
    # max(25, ceil(2 * floor / s)) epochs, gave the control fewer steps for 32 of them)
    from medspt.evaluation.configs import config_params

    shared = {"min_steps": min_steps}  # the defaults: 10 + 15 epochs
    spt = SPTClassifier(**config_params("spt-span", 2, 0, shared))
    long = SPTClassifier(**config_params("scratch-long", 2, 0, shared))
    short = []
    for s in range(1, 201):
        for clf in (spt, long):
            clf.batch_size_ = 1  # n_train = s windows: s steps an epoch
        spt_steps = s * (spt._stage_epochs(spt.pretrain_epochs, s) + spt._finetune_epochs(s))
        long_steps = s * long._finetune_epochs(s)
        if long_steps < spt_steps:
            short.append(s)
        assert long_steps - spt_steps < s  # the same budget, not a larger one
    assert short == []
    # a plain scratch fit keeps its own budget
    scratch = SPTClassifier(**config_params("scratch", 2, 0, shared))
    scratch.batch_size_ = 1
    assert scratch._finetune_epochs(35) == spt._finetune_epochs(35)


# ---------------------------------------------------------------- normalize


def test_normalize_split_gives_normalized_tensors_and_class_codes(arrays):
    X, y, g = arrays
    clf, data, _ = _prepared(arrays, normalize=True, masking="channel", channel_groups=[[0, 2]])
    assert isinstance(data, TrainingData)
    n_val = len(data.X_val)
    assert data.X_train.shape == (len(X) - n_val, 3, 32) and data.X_train.dtype == torch.float32
    assert data.y_train.dtype == torch.int64 and data.y_val.shape == (n_val,)
    assert clf.mean_.shape == (3,) and clf.std_.shape == (3,)
    # statistics of all fitted windows: the normalized windows have mean 0 and std 1
    everything = torch.cat([data.X_train, data.X_val]).numpy()
    np.testing.assert_allclose(everything.mean(axis=(0, 2)), 0.0, atol=1e-5)
    np.testing.assert_allclose(everything.std(axis=(0, 2)), 1.0, atol=1e-4)
    train, val = clf._split(y, g)  # the same split again: it is seeded
    np.testing.assert_array_equal(clf.classes_[data.y_train.numpy()], y[train])
    np.testing.assert_array_equal(clf.classes_[data.y_val.numpy()], y[val])
    assert data.channel_groups == [[0, 2]]


def test_a_bad_channel_group_fails_before_training(arrays):
    with pytest.raises(InputError, match="ch7"):
        _prepared(arrays, masking="channel", channel_groups=[["ch7"]])


def test_model_config_follows_the_parameters(arrays):
    _, _, config = _prepared(arrays, normalize="instance", window_stats=True)
    assert (config.n_channels, config.n_steps, config.n_classes) == (3, 32, 2)
    assert (config.depth, config.d_model, config.n_heads, config.patch_len) == (1, 16, 2, 8)
    assert config.instance_norm and config.window_stats
    _, _, plain = _prepared(arrays, normalize=True)
    assert not plain.instance_norm


# ---------------------------------------------------------------- training stages


def test_pretrain_trains_the_encoder_and_leaves_the_head(arrays):
    clf, data, config = _prepared(arrays)
    model = SPTTransformer(config)
    head = model.head.weight.detach().clone()
    embed = model.embed.mix.weight.detach().clone()  # the conv tokenizer's channel mixing
    history, best = clf._pretrain(model, data, seed=0, epochs=2)
    assert [row["epoch"] for row in history] == [1, 2] and 1 <= best <= 2
    assert "val_loss" in history[0] and "val_balanced_accuracy" not in history[0]
    assert torch.equal(model.head.weight, head)
    assert not torch.equal(model.embed.mix.weight, embed)


def test_finetune_reports_validation_accuracy(arrays):
    clf, data, config = _prepared(arrays)
    history, best = clf._finetune(SPTTransformer(config), data, 0, epochs=3, desc="finetune")
    assert len(history) == 3 and 1 <= best <= 3
    assert {"train_loss", "val_loss", "val_balanced_accuracy"} <= set(history[0])


def test_recover_switches_to_full_attention_in_the_stage_that_ends_hierarchical(arrays):
    clf, data, config = _prepared(arrays, **HIER, recover_epochs=2)
    assert clf._recovery_stage() == "finetune"
    model = SPTTransformer(config)
    history, _ = clf._recover(model, data, seed=0)
    assert model.config.attention == "full" and len(history) == 2
    assert "val_balanced_accuracy" in history[0]  # fine-tuning epochs

    clf, data, config = _prepared(arrays, **HIER, recover_epochs=1, hierarchical_stages="pretrain")
    assert clf._recovery_stage() == "pretrain"
    history, _ = clf._recover(SPTTransformer(config), data, seed=0)
    assert len(history) == 1 and "val_balanced_accuracy" not in history[0]  # reconstruction


@pytest.mark.parametrize(
    "params, stage",
    [
        (dict(), None),
        (dict(attention="hierarchical"), "finetune"),
        (dict(attention="hierarchical", hierarchical_stages="pretrain"), "pretrain"),
        # no pretraining: fine-tuning is the stage that ends hierarchical attention
        (
            dict(attention="hierarchical", hierarchical_stages="pretrain", pretrain=False),
            "finetune",
        ),
        (
            dict(attention="hierarchical", hierarchical_stages="pretrain", pretrain_epochs=0),
            "finetune",
        ),
    ],
)
def test_recovery_stage(params, stage):
    assert SPTClassifier(**params)._recovery_stage() == stage


def test_fit_member_returns_a_trained_model_on_cpu_with_its_history(arrays):
    clf, data, config = _prepared(arrays, **HIER, recover_epochs=1)
    model, history, best = clf._fit_member(config, 0, data)
    assert not model.training and next(model.parameters()).device.type == "cpu"
    assert model.config.attention == "full" and config.attention == "hierarchical"
    assert [len(history[s]) for s in ("pretrain", "finetune", "recover")] == [2, 3, 1]
    assert set(best) == {"pretrain", "finetune", "recover"}
    scratch, data, config = _prepared(arrays, pretrain=False)
    _, history, best = scratch._fit_member(config, 0, data)
    assert history["pretrain"] == [] and best["pretrain"] == 0 and len(history["finetune"]) == 3
