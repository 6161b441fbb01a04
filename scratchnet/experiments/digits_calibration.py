r"""The real-data study's last step: temperatures, test scores, KL to the fitted model.

After :func:`~scratchnet.experiments.digits.real_unit` has trained the networks
of every split, :func:`calibrate` fits a temperature to each network and to
each split's fitted generative model on the validation split, applies it where
:func:`scratchnet.temperature.choose_temperature` allows, and scores every model
on the test split: the constant prediction (the training split's class
frequencies), the networks at their last and at their selected step, before and
after scaling, and the fitted model; with the mean KL from the fitted posterior
to each network (after scaling both only where both temperatures are applied).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..losses import nll_loss
from ..metrics import expected_calibration_error
from ..softmax import log_softmax, softmax
from ..temperature import choose_temperature

__all__ = ["calibrate", "calibration_notes"]


def _scores(logits: np.ndarray, c: np.ndarray, temperature: float) -> dict:
    """Test NLL, ECE and accuracy of softmax(logits / T)."""
    log_q = log_softmax(logits / temperature, axis=1)
    return {"nll": float(nll_loss(log_q, c)),
            "ece": expected_calibration_error(np.exp(log_q), c),
            "accuracy": float((log_q.argmax(axis=1) == c).mean())}


def _choices(logits: Any, targets: np.ndarray) -> list:
    """:func:`choose_temperature` of each validation logit array."""
    return [choose_temperature(z, targets) for z in logits]


def calibration_notes(what: str, choices: list) -> list:
    """One line on the temperatures kept at 1, counted by reason, with the first.

    Parameters
    ----------
    what : str
        Whose temperatures ("networks", "fitted model").
    choices : list of TemperatureChoice
        From :func:`scratchnet.temperature.choose_temperature`.

    Returns
    -------
    list of str
        One line, or none where every fit is applied.

    Examples
    --------
    >>> from scratchnet.experiments.digits_calibration import calibration_notes
    >>> from scratchnet.temperature import choose_temperature
    >>> choice = choose_temperature([[2.0, 0.0]] * 4, [0, 0, 0, 1])
    >>> note = calibration_notes("networks", [choice])[0]
    >>> print(note)  # doctest: +NORMALIZE_WHITESPACE
    networks: temperature kept at 1 for 1 of 1 (0 at a bound of the search, 1
    within two standard errors of 1, 0 not confirmed by the validation split's
    two halves); e.g. the 4 held-out samples cannot tell T = 1.82 from 1 (1/T =
    0.55 +- 0.58)
    """
    kept = [c.kept for c in choices if c.kept]
    if not kept:
        return []
    bound = sum(k.startswith("the fit ended at its bound") for k in kept)
    halves = sum(k.startswith("fitted on either half") for k in kept)
    return [f"{what}: temperature kept at 1 for {len(kept)} of {len(choices)} "
            f"({bound} at a bound of the search, {len(kept) - bound - halves} within "
            f"two standard errors of 1, {halves} not confirmed by the validation "
            f"split's two halves); e.g. {kept[0]}"]


def calibrate(units: list, splits: list, fitted: list) -> dict:
    """Temperatures on validation; test scores and KL to the fitted model.

    Parameters
    ----------
    units : list of dict
        :func:`~scratchnet.experiments.digits.real_unit`'s results, one per
        split.
    splits : list of Splits
    fitted : list of FittedModel
        The generative model fitted to each split.

    Returns
    -------
    dict
        ``DigitsResult.real``
        (:class:`~scratchnet.experiments.digits.DigitsResult`).

    Examples
    --------
    >>> from scratchnet.datasets import load_digits
    >>> from scratchnet.experiments.digits import (DigitsSettings, fit_generative,
    ...                                            real_unit)
    >>> from scratchnet.experiments.digits_calibration import calibrate
    >>> digits = load_digits()
    >>> unit = real_unit(digits, DigitsSettings(steps=20, seeds=2, hidden=8))
    >>> real = calibrate([unit], [digits], [fit_generative(digits, 4)])
    >>> len(real["scores"]["network"]), real["split"].tolist()
    (2, [0, 0])
    """
    seeds = len(units[0]["best_step"])
    real: dict = {key: np.concatenate([u[key] for u in units], axis=1)
                  for key in ("nll", "ece", "accuracy", "validation_nll")}
    real["steps"], real["validation_steps"] = units[0]["steps"], units[0][
        "validation_steps"]
    for key in ("best_step", "val_logits", "test_logits", "last_test_logits"):
        real[key] = np.concatenate([u[key] for u in units])
    real["split"] = np.repeat(np.arange(len(units)), seeds)
    scores: dict = {key: [] for key in ("network", "network, T", "network, last step",
                                        "generative", "generative, T", "constant")}
    net_choices, gen_choices, kl, kl_t = [], [], [], []
    for unit, split, model in zip(units, splits, fitted):
        c_val, c = split.validation.c, split.test.c
        gen_test = model.log_posterior(split.test.x)
        gen = choose_temperature(model.log_posterior(split.validation.x), c_val)
        nets = _choices(unit["val_logits"], c_val)
        gen_choices.append(gen)
        net_choices += nets
        counts = np.bincount(split.train.c, minlength=gen_test.shape[1])
        scores["constant"].append(_scores(np.broadcast_to(
            np.log(counts / counts.sum()), gen_test.shape), c, 1.0))
        scores["generative"].append(_scores(gen_test, c, 1.0))
        scores["generative, T"].append(_scores(gen_test, c, gen.temperature))
        log_p = log_softmax(gen_test, axis=1)
        log_p_t = log_softmax(gen_test / gen.temperature, axis=1)
        for z, z_last, net in zip(unit["test_logits"], unit["last_test_logits"], nets):
            scores["network"].append(_scores(z, c, 1.0))
            scores["network, T"].append(_scores(z, c, net.temperature))
            scores["network, last step"].append(_scores(z_last, c, 1.0))
            log_q = log_softmax(z, axis=1)
            log_q_t = log_softmax(z / net.temperature, axis=1)
            kl.append((np.exp(log_p) * (log_p - log_q)).sum(-1).mean())
            both = not (net.kept or gen.kept)
            kl_t.append((np.exp(log_p_t) * (log_p_t - log_q_t)).sum(-1).mean()
                        if both else np.nan)
    real["scores"], real["kl_to_fitted"], real["kl_to_fitted_T"] = (
        scores, np.array(kl), np.array(kl_t))
    real["temperatures"] = np.array([ch.temperature for ch in net_choices])
    real["fitted_temperatures"] = np.array([ch.fitted for ch in net_choices])
    real["kept"] = [ch.kept for ch in net_choices]
    real["generative_temperature"] = np.array([ch.temperature for ch in gen_choices])
    real["generative_fitted"] = np.array([ch.fitted for ch in gen_choices])
    real["generative_kept"] = [ch.kept for ch in gen_choices]
    real["temperature_notes"] = (calibration_notes("networks", net_choices)
                                 + calibration_notes("fitted model", gen_choices))
    first, split = units[0], splits[0]
    gen = fitted[0].log_posterior(split.test.x)
    t_net, t_gen = real["temperatures"][0], real["generative_temperature"][0]
    real["probabilities"] = {
        "network": softmax(first["test_logits"][0], axis=1),
        "network, T": softmax(first["test_logits"][0] / t_net, axis=1),
        "generative": softmax(gen, axis=1),
        "generative, T": softmax(gen / t_gen, axis=1)}
    real["test_targets"] = split.test.c
    real["test_size"], real["validation_size"] = len(split.test.c), len(
        split.validation.c)
    return real
