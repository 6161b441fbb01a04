"""Behaviours that mutation testing (tools/mutation.py) found unchecked.

Each test pins a documented behaviour of the core modules that a small bug
(a dropped argument, a wrong name in a message, a ``>`` for ``>=``) could
break without any other test failing: a NaN gradient passed back,
float32 kept on rarer paths, the argument named in error messages, results
at the edges of the domains.  Values are compared with closed forms, mpmath
or plain-Python sums, never with the code under test.
"""

import math
import re
from pathlib import Path

import mpmath
import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp, softmax

import scratchnet as sn
from scratchnet import information, layers, scoring

F32 = np.float32


# --- layers ---------------------------------------------------------------------


def test_linear_backward_lets_a_nan_from_upstream_through():
    # (as relu_backward does; whether the forward passes should refuse a NaN
    # input is an open entry of the bad-input catalogue, so it is not pinned here)
    _, cache = layers.linear_forward(np.ones((1, 2)), np.eye(2), np.zeros(2))
    dx, dW, db = layers.linear_backward([[np.nan, 0.0]], cache)
    assert np.isnan(db[0]) and db[1] == 0.0
    assert np.isnan(dx[0, 0]) and np.isnan(dW[0, 0]) and dW[0, 1] == 0.0


@pytest.mark.parametrize("call, match", [
    (lambda: layers.linear_forward("a", np.eye(2), np.zeros(2)), r"^x must"),
    (lambda: layers.linear_forward(np.eye(2), "a", np.zeros(2)), r"^W must"),
    (lambda: layers.linear_forward(np.eye(2), np.eye(2), "a"), r"^b must"),
    (lambda: layers.relu_forward("a"), r"^x must"),
    (lambda: layers.tanh_forward("a"), r"^x must"),
    (lambda: layers.relu_backward("a", np.zeros(2)), r"^dout must"),
])
def test_layers_name_the_argument_of_the_wrong_type(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_backward_messages_name_the_layer_and_the_received_cache():
    x = np.ones((2, 3))
    _, lin = layers.linear_forward(x, np.ones((3, 2)), np.zeros(2))
    _, act = layers.relu_forward(x)
    _, tanh = layers.tanh_forward(x)
    _, soft = layers.softmax_forward(x)
    _, logsoft = layers.log_softmax_forward(x)
    wrong = np.ones((3, 3))
    for backward, cache, what in [
        (layers.linear_backward, lin, "layer's output"),
        (layers.relu_backward, act, "ReLU's output"),
        (layers.tanh_backward, tanh, "tanh's output"),
        (layers.softmax_backward, soft, "softmax's output"),
        (layers.log_softmax_backward, logsoft, "log-softmax's output"),
    ]:
        with pytest.raises(ValueError, match=f"^dout must have the shape of the {what} "):
            backward(wrong, cache)
    with pytest.raises(TypeError, match=r"returned by relu_forward; got \[0.0\] \(list\)$"):
        layers.relu_backward(np.ones((2, 3)), [0.0])
    # A tuple of the wrong length is refused as a cache, naming the layer.
    for backward, layer in [(layers.linear_backward, "linear"),
                            (layers.softmax_backward, "softmax"),
                            (layers.log_softmax_backward, "log_softmax")]:
        with pytest.raises(TypeError, match=rf"returned by {layer}_forward; got .* \(tuple\)$"):
            backward(np.ones((2, 3)), (x, x, x))


def test_relu_backward_keeps_float32():
    cache = np.array([-1.0, 2.0], dtype=F32)
    got = layers.relu_backward(np.array([5.0, 3.0], dtype=F32), cache)
    assert got.dtype == F32
    np.testing.assert_array_equal(got, [0.0, 3.0])


# --- softmax --------------------------------------------------------------------


def test_logsumexp_keeps_float32_on_empty_and_all_minus_inf_slices():
    assert sn.logsumexp(np.empty((2, 0), F32)).dtype == F32
    got = sn.logsumexp(np.array([[-np.inf, -np.inf], [0.0, 0.0]], F32))
    assert got.dtype == F32
    np.testing.assert_array_equal(got, [-np.inf, F32(math.log(2))])


def test_logsumexp_keeps_a_length_one_batch_axis():
    assert sn.logsumexp(np.zeros((1, 3)), axis=1).shape == (1,)
    assert sn.logsumexp(np.zeros((3, 1)), axis=0).shape == (1,)


def test_infinite_and_far_apart_logits_give_no_overflow_warning():
    # (the suite turns warnings into errors)
    assert sn.logsumexp([1e308, np.inf]) == np.inf
    np.testing.assert_array_equal(sn.softmax([1e308, -1e308]), [1.0, 0.0])
    np.testing.assert_array_equal(sn.log_softmax([1e308, -1e308]), [0.0, -np.inf])
    assert sn.cross_entropy([[1e308, -1e308]], [0]) == 0.0


def test_softmax_messages_name_x_and_the_axis():
    for f in (sn.softmax, sn.log_softmax):
        with pytest.raises(ValueError, match=r"^x has a slice along axis 1 where every entry "
                                             r"is -inf \(every probability 0\), so it "
                                             r"cannot be normalised$"):
            f([[0.0, 1.0], [-np.inf, -np.inf]], axis=1)


def test_logit_near_one_half_to_full_relative_precision():
    for p in (0.5 + 1e-9, 0.5 - 3e-10, 0.4):  # not dyadic: no lucky cancellation
        with mpmath.workdps(40):
            want = float(mpmath.log(mpmath.mpf(p) / (1 - mpmath.mpf(p))))
        assert sn.logit(p) == pytest.approx(want, rel=1e-14)


def test_one_hot_of_no_targets_asks_for_num_classes():
    with pytest.raises(ValueError, match=r"^targets is empty, so the number of classes "
                                         r"cannot be inferred; pass num_classes$"):
        sn.one_hot(np.array([], dtype=int))


# --- losses and their shared checks ---------------------------------------------

BCE = sn.functional.binary_cross_entropy_with_logits


def test_bce_pos_weight_checks_name_pos_weight():
    with pytest.raises(TypeError, match=r"^pos_weight must be an array of real numbers"):
        BCE([0.0], [1.0], pos_weight="a")
    with pytest.raises(ValueError, match=r"^pos_weight must be finite; got inf"):
        BCE([0.0], [1.0], pos_weight=np.inf)
    with pytest.raises(ValueError, match=r"^pos_weight must be a scalar or have shape \(2,\)"):
        BCE([[0.0, 0.0]], [[1.0, 1.0]], pos_weight=[[1.0, 1.0]])
    with pytest.raises(ValueError, match=r"^pos_weight must be a scalar or have shape \(2,\)"):
        BCE([0.0, 0.0], [1.0, 1.0], pos_weight=[1.0, 1.0, 1.0])  # 1-D logits


def test_bce_pos_weight_zero_silences_the_positive_term():
    # pi = 0 is allowed (non-negative): the positive term is 0, even at s = -inf.
    assert BCE([0.0, -np.inf], [1.0, 1.0], pos_weight=0.0, reduction="sum") == 0.0
    want = 0.5 * math.log1p(math.exp(3.0))  # y = 1/2, s = 3: (1 - y) log(1 + e^s)
    assert BCE([3.0], [0.5], pos_weight=0.0) == pytest.approx(want, rel=1e-15)


def test_bce_with_pos_weight_keeps_float32_and_overflows_to_inf_quietly():
    got = BCE(np.array([0.0, 2.0], F32), np.array([1.0, 0.0], F32), pos_weight=F32(3.0),
              reduction="none")
    assert got.dtype == F32
    want = [3 * math.log(2), math.log1p(math.exp(2.0))]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # 10 * 1e308 is beyond the largest float: inf, without an overflow warning.
    assert BCE([-1e308], [1.0], pos_weight=10.0, reduction="none")[0] == np.inf


def test_infinite_logits_are_valid_scores():
    assert sn.cross_entropy([[0.0, -np.inf]], [0]) == 0.0
    assert sn.cross_entropy([[0.0, -np.inf]], [1]) == np.inf
    assert BCE([-np.inf, np.inf], [0.0, 1.0], reduction="sum") == 0.0


def test_a_scalar_batch_is_refused_with_its_name():
    with pytest.raises(ValueError, match=r"^outputs must be an array with a batch axis, "
                                         r"shape \(N, \.\.\.\); got a scalar$"):
        sn.mse_loss(1.0, 0.0)


def test_the_transposed_hint_appears_exactly_when_targets_fit_the_other_axis():
    with pytest.raises(ValueError, match=r"if logits is \(M, N\), transposed"):
        scoring.multi_margin_loss(np.zeros((2, 3)), [0, 1, 2])  # N = 2, the smallest
    with pytest.raises(ValueError) as info:
        scoring.multi_margin_loss(np.zeros((3, 4)), [0, 1])
    assert "transposed" not in str(info.value)
    with pytest.raises(ValueError) as info:
        scoring.multi_margin_loss(np.zeros((1, 3)), [0, 1, 2])  # one sample: no hint
    assert "transposed" not in str(info.value)


def test_class_weights_keep_float32():
    x = np.array([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0]], F32)
    w = np.array([1.0, 2.0, 0.5])  # float64 weights
    ce = sn.functional.cross_entropy(x, [0, 1], weight=w)
    assert ce.dtype == F32
    lse = [math.log(math.exp(2) + 1 + math.exp(-1)), math.log(2 + math.e)]
    want = (1.0 * (lse[0] - 2.0) + 2.0 * (lse[1] - 1.0)) / 3.0
    assert float(ce) == pytest.approx(want, rel=1e-6)
    mm = scoring.multi_margin_loss(x, [0, 1], weight=w, reduction="none")
    assert mm.dtype == F32
    # sample 0: margins max(0, 1 - 2 + 0), max(0, 1 - 2 - 1) -> 0; sample 1:
    # max(0, 1 - 1 + 0) twice -> 0; so shift the first sample to be active.
    mm = scoring.multi_margin_loss(x - x * [[1, 0, 0], [0, 0, 0]], [0, 1], weight=w,
                                   reduction="none")
    np.testing.assert_allclose(mm, [1.0 * (1 + 0 + 0) / 3 + 1.0 * 0, 0.0], rtol=1e-6)


def test_multi_margin_loss_keeps_float32_without_weights():
    x = np.array([[0.0, 0.5, -2.0]], F32)
    got = scoring.multi_margin_loss(x, [0], reduction="none")
    assert got.dtype == F32
    np.testing.assert_allclose(got, [(1.5 + 0.0) / 3], rtol=1e-6)


def test_mse_loss_refuses_infinite_targets_and_keeps_float32():
    with pytest.raises(ValueError, match=r"^targets must be finite"):
        sn.mse_loss([[0.0, 1.0]], [[0.0, np.inf]])
    got = sn.mse_loss(np.array([[1.0, 2.0]], F32), np.array([[0.0, 0.5]]))  # float64 targets
    assert got.dtype == F32
    assert float(got) == pytest.approx((1.0 + 2.25) / 2, rel=1e-7)


# --- information ----------------------------------------------------------------


def test_entropy_in_a_base_below_one_is_negative():
    assert sn.entropy([0.5, 0.5], base=0.5) == pytest.approx(-1.0, rel=1e-15)
    assert information.kl_divergence([1.0, 0.0], [0.5, 0.5], base=0.25) == \
        pytest.approx(-0.5, rel=1e-15)
    with pytest.raises(ValueError, match=r"^base must be a positive real number other "
                                         r"than 1 \(None "):
        sn.entropy([0.5, 0.5], base=1)


def test_mixed_precision_distributions_give_float64():
    p = np.array([0.25, 0.75])
    q = np.array([0.5, 0.5])
    want = -(0.25 * math.log(0.5) + 0.75 * math.log(0.5))
    for pp, qq in [(p.astype(F32), q), (p, q.astype(F32))]:
        got = information.cross_entropy(pp, qq)
        assert got.dtype == np.float64
        assert got == pytest.approx(want, rel=1e-7)  # float32 inputs: their precision


def test_log_q_is_checked_along_the_given_axis():
    # Columns are distributions, rows are not: fine along axis 0.
    p = np.array([[0.5, 0.25], [0.5, 0.75]])
    q = np.array([[0.25, 0.5], [0.75, 0.5]])
    got = information.kl_divergence(p, log_q=np.log(q), axis=0)
    want = [0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75),
            0.25 * math.log(0.25 / 0.5) + 0.75 * math.log(0.75 / 0.5)]
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


def test_information_messages_name_p():
    with pytest.raises(TypeError, match=r"^p must be an array of real numbers"):
        information.cross_entropy("a", [1.0])
    with pytest.raises(ValueError, match=r"^p "):
        information.kl_divergence([0.5, 0.6], [0.5, 0.5])


def test_a_batch_of_one_distribution_keeps_its_batch_axis():
    p = np.full((1, 2), 0.5)
    q = np.array([[0.25, 0.75]])
    assert sn.entropy(p).shape == (1,)
    assert information.cross_entropy(p, q).shape == (1,)
    assert information.kl_divergence(p, q).shape == (1,)


def test_gibbs_inequality_on_a_batch_gives_each_rows_entropy():
    p = np.array([[0.5, 0.5], [1.0, 0.0]])
    q = np.array([[0.9, 0.1], [0.5, 0.5]])
    res = sn.gibbs_inequality(p, q)
    np.testing.assert_allclose(res.entropy, [math.log(2), 0.0], rtol=1e-15, atol=0)
    assert repr(res).startswith("GibbsResult(cross_entropy=[")
    assert "entropy=[0.693147, 0.      ]" in repr(res)


def test_expected_kl_messages_name_the_argument():
    p, q, w = np.array([[0.5, 0.5]]), np.array([[0.25, 0.75]]), [1.0]
    for args, kwargs, error, match in [
        (("a", q, w), {}, TypeError, r"^p_cond must be an array of real numbers"),
        ((np.ones(2), q, w), {}, ValueError, r"^p_cond must have shape \(n, M\), one "
                                             r"conditional distribution per row"),
        ((p,), {"weights": w}, TypeError, r"q_cond=NoneType, log_q=NoneType, "
                                          r"weights=list$"),
        ((p, "a", w), {}, TypeError, r"^q_cond must be an array of real numbers"),
        ((p, None, w), {"log_q": "a"}, TypeError, r"^log_q must be an array of real"),
        ((p, q, "a"), {}, TypeError, r"^weights must be an array of real numbers"),
        (([[0.5, 0.6]], q, w), {}, ValueError, r"^p_cond must sum to 1"),
        ((p, None, w), {"log_q": [[0.0, 0.0]]}, ValueError,
         r"^log_q must be log-probabilities"),
    ]:
        with pytest.raises(error, match=match):
            information.expected_kl(*args, **kwargs)


# --- the Gaussian model and its checks (tools/mutation.py on gaussian, _mixture) ------


@pytest.mark.parametrize("make, message", [
    (lambda: sn.GaussianClasses([0.0, np.inf], [1.0, 1.0]),
     "means must be finite; got inf at index 1"),
    (lambda: sn.GaussianClasses([0.0, 1.0], [1.0, np.inf]),
     "scales must be finite; got inf at index 1"),
    (lambda: sn.GaussianClasses([0.0, 1.0], [1.0, 1.0], [0.5, np.inf]),
     "priors must be finite; got inf at index 1"),
    (lambda: sn.GaussianClasses([0.0, 1.0], [1.0, 1.0]).posterior([0.0, np.inf]),
     "x must be finite; got inf at index 1"),
    (lambda: sn.two_gaussian_posterior([0.0, -np.inf], 0.0, 1.0, 3.0, 1.0),
     "x must be finite; got -inf at index 1"),
    (lambda: sn.GaussianClasses([0.0, 1.0], [1.0, 1.0]).posterior(np.zeros((2, 2))),
     "x must have shape (n, 1) or (n,), one row of 1 feature(s) per input; got "
     "shape (2, 2)"),
    (lambda: sn.GaussianClasses([[0.0, 1.0]], covariances=[np.eye(2)]).posterior(
        np.zeros(3)), "x must have shape (n, 2), one row of 2 feature(s) per input; "
     "got shape (3,)"),
])
def test_the_gaussian_models_infinite_and_misshapen_inputs_are_named(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_the_refusal_of_far_inputs_shows_the_row():
    one = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
    with pytest.raises(ValueError) as info:
        one.log_posterior([1e6])
    assert str(info.value) == (
        "x[0] = 1e+06 is too far from every class for float64: log P(x) = -5e+11 "
        "(below -1e+10, about 1.4e5 standard deviations from every mean), where "
        "rounding swamps the differences between the classes' log joints; for two "
        "one-dimensional classes, sn.two_gaussian_posterior is exact at any distance")
    for d, shown in [(4, "[1e+06, 0, 0, 0]"), (5, "[1e+06, 0, 0, 0, ...]")]:
        task = sn.GaussianClasses(np.zeros((2, d)), covariances=[np.eye(d)] * 2)
        far = np.zeros((2, d))
        far[1, 0] = 1e6
        with pytest.raises(ValueError, match=rf"^x\[1\] = {re.escape(shown)} is too"):
            task.log_posterior(far)


def test_a_one_dimensional_task_has_no_covariances_and_shows_its_name():
    task = sn.GaussianClasses([0.0, 3.0], [1.0, 2.0], name="pair")
    assert task.covariances is None
    assert repr(task) == ("GaussianClasses(means=[0.0, 3.0], scales=[1.0, 2.0], "
                          "priors=[0.5, 0.5], name='pair')")
    assert repr(sn.GaussianClasses([0.0], [1.0])) == (
        "GaussianClasses(means=[0.0], scales=[1.0], priors=[1.0])")


def test_priors_within_the_tolerance_are_renormalised():
    task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0], [0.3, 0.7000005])
    np.testing.assert_allclose(task.priors, [0.3 / 1.0000005, 0.7000005 / 1.0000005],
                               rtol=1e-15)


def test_asymmetry_is_measured_against_each_classs_own_scale():
    # 1e-5 off in a matrix of size 1e6 is rounding (relative 1e-11): accepted; the
    # same 1e-5 in a class of size 1 is not, whatever the other classes' sizes
    big = np.diag([1e6, 1e6])
    big[0, 1] = 1e-5
    sn.GaussianClasses([[0.0, 0.0], [1.0, 0.0]], covariances=[big, np.diag([1e6, 1e6])])
    small = np.eye(2)
    small[0, 1] = 1e-5
    with pytest.raises(ValueError, match=r"covariances\[1\] must be a symmetric "
                       r"covariance matrix; got 1e-05 at \[0, 1\] but 0 at \[1, 0\]"):
        sn.GaussianClasses([[0.0, 0.0], [1.0, 0.0]],
                           covariances=[np.diag([1e6, 1e6]), small])


def test_sampling_is_the_inverse_cdf_then_mean_plus_factor_times_normal():
    # the documented recipe, drawn by hand from the same stream: u, then z
    means = np.array([[0.0, 1.0], [5.0, -2.0]])
    covs = np.array([[[2.0, 0.5], [0.5, 1.0]], [[1.0, -0.3], [-0.3, 0.5]]])
    x, c = sn.GaussianClasses(means, covariances=covs, priors=[0.3, 0.7]).sample(
        50, rng=3)
    rng = np.random.default_rng(3)
    c_ref = (rng.random(50) >= 0.3).astype(np.int64)
    z = rng.standard_normal((50, 2))
    x_ref = means[c_ref] + np.einsum("nij,nj->ni", np.linalg.cholesky(covs)[c_ref], z)
    np.testing.assert_array_equal(c, c_ref)
    np.testing.assert_allclose(x, x_ref, rtol=1e-14)
    empty_x, empty_c = sn.GaussianClasses([0.0], [1.0]).sample(0, rng=0)
    assert empty_x.shape == (0, 1) and empty_c.shape == (0,)


def test_sample_labels_follow_their_rng():
    task = sn.tasks.separated()
    x = np.linspace(0.5, 2.5, 200)
    first, again = task.sample_labels(x, rng=7), task.sample_labels(x, rng=7)
    np.testing.assert_array_equal(first, again)
    u = np.random.default_rng(7).random(200)        # P(c = 1 | x) > u means class 1
    np.testing.assert_array_equal(first, (task.posterior(x)[:, 0] <= u).astype(int))


NEEDS_ONE = ("GaussianClasses needs one of scales (standard deviations, shape (M,), with "
             "means of shape (M,)) or covariances (matrices, shape (M, D, D), with means "
             "of shape (M, D)); got ")


@pytest.mark.parametrize("make, error, message", [
    (lambda: sn.GaussianClasses([0.0, 1.0]), TypeError, NEEDS_ONE + "neither"),
    (lambda: sn.GaussianClasses([0.0, 1.0], [1.0, 1.0], covariances=[1.0, 1.0]),
     TypeError, NEEDS_ONE + "both"),
    (lambda: sn.GaussianClasses(np.zeros(0), np.zeros(0)), ValueError,
     "means must have shape (M,) or (M, D) with M, D >= 1; got shape (0,)"),
    (lambda: sn.GaussianClasses([0.0, 1.0], covariances=[np.eye(1)] * 2), ValueError,
     "covariances needs means of shape (M, D); got means of shape (2,): for a "
     "one-dimensional task give scales, the standard deviations"),
    (lambda: sn.GaussianClasses([[0.0, 0.0]], covariances=[np.eye(2)])
     .decision_boundaries(), ValueError, "decision_boundaries needs a one-dimensional "
     "task with two classes; got dim=2, num_classes=1"),
])
def test_the_gaussian_models_messages_word_for_word(make, error, message):
    with pytest.raises(error) as info:
        make()
    assert str(info.value) == message


# --- readouts: reading back what an option of the loss distorted --------------------


def test_cross_entropy_readout_refuses_a_negative_label_smoothing():
    f = np.log([[1.0, 4.0]])
    with pytest.raises(ValueError, match=r"label_smoothing must be in \[0, 1\); "
                                         r"got -0\.1"):
        sn.readouts.cross_entropy_log_proba(f, label_smoothing=-0.1)


def test_cross_entropy_readout_undoes_no_smoothing_by_default():
    # logits log(1, 4): the softmax is (1, 4) / 5, written out by hand
    got = sn.readouts.cross_entropy_log_proba(np.log([[1.0, 4.0], [3.0, 1.0]]))
    np.testing.assert_allclose(got, np.log([[0.2, 0.8], [0.75, 0.25]]), rtol=1e-15)


def test_binary_readout_takes_pos_weight_as_a_scalar_or_one_entry():
    # logit log 9 under pos_weight 9: logit p = log 9 - log 9 = 0, p = 1/2
    for w in (9.0, np.array([9.0])):
        got = sn.readouts.binary_log_proba([[math.log(9.0)]], pos_weight=w)
        np.testing.assert_allclose(got, np.log([[0.5, 0.5]]), rtol=1e-15)
    with pytest.raises(ValueError, match=r"pos_weight must be a scalar or have "
                                         r"shape \(1,\); got shape \(2,\)"):
        sn.readouts.binary_log_proba([[0.0]], pos_weight=np.array([9.0, 9.0]))


def test_readouts_name_a_bad_weight_and_refuse_an_infinite_one():
    f = np.zeros((1, 2))
    with pytest.raises(ValueError, match="weight must be finite; got inf at index 1"):
        sn.readouts.cross_entropy_log_proba(f, weight=[1.0, np.inf])
    with pytest.raises(ValueError, match="pos_weight must not contain NaN"):
        sn.readouts.binary_log_proba([[0.0]], pos_weight=np.nan)
    with pytest.raises(ValueError, match=r"the binary readout takes one output per "
                                         r"input, class 1's logit: outputs of shape "
                                         r"\(N, 1\); got shape \(1, 2\)"):
        sn.readouts.binary_log_proba(f)


def test_readouts_keep_float32_when_they_undo_a_weight():
    f = np.log(np.array([[1.0, 4.0]], dtype=F32))
    got = sn.readouts.cross_entropy_log_proba(f, weight=[1.0, 4.0])
    assert got.dtype == F32
    np.testing.assert_allclose(got, np.log([[0.5, 0.5]]), rtol=1e-6)
    got = sn.readouts.binary_log_proba(np.array([[math.log(9.0)]], dtype=F32),
                                       pos_weight=9.0)
    assert got.dtype == F32
    np.testing.assert_allclose(got, np.log([[0.5, 0.5]]), atol=1e-6)


def test_smoothing_readout_clips_an_overshoot_at_one_before_renormalising():
    # eps = 0.2, M = 2: r = (0.95, 0.05) gives (r - 0.1) / 0.8 = (1.0625, -0.0625),
    # clipped to (1, 1e-4) (MSE_FLOOR) and renormalised: (1, 1e-4) / 1.0001
    got = sn.readouts.cross_entropy_log_proba(np.log([[0.95, 0.05]]),
                                              label_smoothing=0.2)
    floor = sn.readouts.MSE_FLOOR
    assert floor == 1e-4
    want = [math.log(1 / (1 + floor)), math.log(floor / (1 + floor))]
    np.testing.assert_allclose(got[0], want, rtol=1e-12)


# --- temperature scaling ----------------------------------------------------------

# Four inputs with logits (2, 0), three of class 0: the softmax of (2/T, 0) should be
# (3/4, 1/4), so the held-out NLL is least at T* = 2 / log 3 = 1.8205.
Z4, T4 = [[2.0, 0.0]] * 4, [0, 0, 0, 1]


def test_fit_temperature_finds_a_minimum_inside_narrow_bounds():
    found = sn.temperature.fit_temperature(Z4, T4, bounds=(0.5, 3.0))
    assert found == pytest.approx(2 / math.log(3), rel=1e-12)


@pytest.mark.parametrize("bounds, z, c, side", [
    # the data's minimum, T = 1.82, lies past a bound the caller narrowed
    ((2.5, 10.0), Z4, T4, "the NLL is least at T = 1.82, below T_min = 2.5: the "
                          "bounds given cut the minimum off (widen them to reach it)"),
    ((0.5, 1.5), Z4, T4, "the NLL is least at T = 1.82, above T_max = 1.5: the "
                         "bounds given cut the minimum off (widen them to reach it)"),
    # no minimum at all: separated logits (T -> 0), or wrong ones (T -> infinity)
    ((0.9, 1.1), [[5.0, 0.0], [0.0, 5.0]], [0, 1],
     "the NLL still falls as T drops below T_min = 0.9 (the logits separate every "
     "class of these data, or nearly: the few errors they make cost less than the "
     "sharpening gains); the minimum lies beyond it (use more held-out data, or "
     "widen bounds)"),
    ((0.9, 1.1), [[5.0, 0.0], [0.0, 5.0]], [1, 0],
     "the NLL still falls as T grows past T_max = 1.1 (the logits rank the right "
     "class no better than chance); the minimum lies beyond it (use more held-out "
     "data, or widen bounds)"),
    # ... even where the slope at T = 100 is small (0.25: under one)
    ((0.9, 1.1), [[0.5, 0.0], [0.0, 0.5]], [1, 0],
     "the NLL still falls as T grows past T_max = 1.1 (the logits rank the right "
     "class no better than chance); the minimum lies beyond it (use more held-out "
     "data, or widen bounds)"),
    # a minimum at T = 70, between T = 50 and SOFTEST = 100: cut off by T_max = 10
    ((0.5, 10.0), [[70 * math.log(3), 0.0]] * 4, T4,
     "the NLL is least at T = 70, above T_max = 10: the bounds given cut the "
     "minimum off (widen them to reach it)"),
    # a minimum at T = 0.18, below SHARPEST = 0.25: read as separated logits
    ((0.5, 10.0), [[0.18 * math.log(3), 0.0]] * 4, T4,
     "the NLL still falls as T drops below T_min = 0.5 (the logits separate every "
     "class of these data, or nearly: the few errors they make cost less than the "
     "sharpening gains); the minimum lies beyond it (use more held-out data, or "
     "widen bounds)")])
def test_fit_temperature_returns_the_bound_beyond_which_its_minimum_lies(bounds, z, c,
                                                                         side):
    bound = bounds[0] if "T_min" in side else bounds[1]
    with pytest.warns(sn.ScratchnetWarning) as caught:
        found = sn.temperature.fit_temperature(z, c, bounds=bounds)
    assert found == bound
    (warning,) = caught
    assert str(warning.message) == f"fit_temperature returned its bound {bound:g}: {side}"
    # it points at the caller's line, not at temperature.py's (under mutmut a
    # trampoline stands between the test and fit_temperature: no == __file__ here)
    assert Path(warning.filename).name != "temperature.py"


@pytest.mark.parametrize("call, words", [
    (lambda: sn.temperature.temperature_scale(np.zeros((1, 2)), np.inf),
     r"temperature must be in \(0, inf\); got inf"),
    (lambda: sn.temperature.fit_temperature([[np.inf, 0.0]], [0]),
     r"logits must be finite; got inf at index \(0, 0\)"),
    (lambda: sn.temperature.fit_temperature(Z4, T4, bounds=(0.1, np.inf)),
     r"bounds\[1\] must be in \(0.1, inf\); got inf"),
    (lambda: sn.temperature.fit_temperature(Z4, T4, bounds=(1.0, 1.0)),
     r"bounds\[1\] must be in \(1, inf\); got 1"),
    (lambda: sn.temperature.fit_temperature(Z4, T4, bounds=(0.0, 1.0)),
     r"bounds\[0\] must be in \(0, inf\]; got 0")])
def test_temperature_refuses_what_has_no_finite_temperature(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def _nll(z, t, T):
    """The held-out NLL at temperature T, written out with SciPy's logsumexp."""
    z = np.asarray(z, dtype=float) / T
    return float(np.mean(logsumexp(z, axis=1) - z[np.arange(len(t)), t]))


def _three_validation_sets():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(200, 3)) * 3
    wide = (z + 2 * rng.normal(size=z.shape)).argmax(1)
    small = rng.normal(size=(500, 10)) * 0.3             # curvature under one
    return [(Z4, T4), (z, wide), (small, (5 * small + rng.gumbel(size=small.shape))
                                  .argmax(1))]


@pytest.mark.parametrize("z, t", _three_validation_sets())
def test_fit_temperature_converges_in_a_few_newton_steps(monkeypatch, z, t):
    # Newton's method converges quadratically: eight evaluations of the slope
    # here (the two bounds, then Newton from beta = 1); bisection alone needs
    # about fifty to reach the same rounding (issue 41: a converged step that
    # landed on the bracket's end used to bisect on for 27 more)
    calls = []
    real = sn.temperature.softmax
    monkeypatch.setattr(sn.temperature, "softmax",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    found = sn.temperature.fit_temperature(z, t)
    assert len(calls) <= 10
    best = minimize_scalar(lambda log_t: _nll(z, t, math.exp(log_t)),
                           bounds=(math.log(1e-2), math.log(1e2)), method="bounded",
                           options={"xatol": 1e-10})
    assert math.log(found) == pytest.approx(best.x, abs=1e-6)
    assert _nll(z, t, found) <= best.fun + 1e-14


# --- choose_temperature: the standard error and the check on halves, by hand ------


def _beta_and_se(z, t, T):
    """1/T and its sandwich standard error, from SciPy's softmax at beta = 1/T."""
    z, t = np.asarray(z, dtype=float), np.asarray(t)
    q = softmax(z / T, axis=1)
    mean = (q * z).sum(axis=1)
    g = mean - z[np.arange(len(t)), t]                    # each row's NLL'(beta)
    var = (q * (z - mean[:, None]) ** 2).sum(axis=1)
    return 1 / T, math.sqrt(np.mean(g**2) / len(t)) / var.mean()


def _gain_of_halves(z, t, bounds):
    """Summed NLL at T = 1 minus at the T fitted on the other half (alternate rows)."""
    z, t = np.asarray(z, dtype=float), np.asarray(t)
    even = np.arange(len(t)) % 2 == 0
    gain = 0.0
    for fit_on, test_on in ((even, ~even), (~even, even)):
        best = minimize_scalar(lambda log_t, f=fit_on: _nll(z[f], t[f], math.exp(log_t)),
                               bounds=tuple(map(math.log, bounds)), method="bounded",
                               options={"xatol": 1e-12})
        half = math.exp(best.x)
        gain += test_on.sum() * (_nll(z[test_on], t[test_on], 1.0)
                                 - _nll(z[test_on], t[test_on], half))
    return gain


Z8, T8 = [[2.0, 0.0]] * 8, [0, 0, 0, 1, 0, 0, 1, 0]      # 6 of 8 right, 3 of 4 per half
Z2, T2 = [[3.0, 0.0], [1.0, 0.0]], [0, 1]                 # one right, one wrong


@pytest.mark.parametrize("z, error, words", [
    (-1.0, ValueError, r"^z must be in \[0, inf\); got -1$"),
    (np.inf, ValueError, r"^z must be in \[0, inf\); got inf$"),
    ("2", TypeError, r"^z must be a real number; got '2'$")])
def test_choose_temperature_refuses_a_z_that_is_no_number_of_standard_errors(z, error,
                                                                             words):
    with pytest.raises(error, match=words):
        sn.temperature.choose_temperature(Z4, T4, z=z)


@pytest.mark.parametrize("logits, targets", [(Z4, T4), (Z8, T8), (Z2, T2)])
def test_choose_temperature_keeps_t_at_one_within_z_standard_errors(logits, targets):
    fitted = sn.temperature.fit_temperature(logits, targets, bounds=(0.25, 100.0))
    beta, se = _beta_and_se(logits, targets, fitted)
    ratio = abs(beta - 1) / se                    # the fit's distance from 1, in se
    kept = sn.temperature.choose_temperature(logits, targets, z=1.02 * ratio)
    assert kept == (1.0, fitted, f"the {len(targets)} held-out samples cannot tell "
                                 f"T = {fitted:.3g} from 1 (1/T = {beta:.2f} +- "
                                 f"{se:.2f})")
    past = sn.temperature.choose_temperature(logits, targets, z=0.98 * ratio)
    assert past.fitted == fitted and "cannot tell" not in past.kept


@pytest.mark.parametrize("logits, targets, applied", [
    (Z4, T4, False), (Z2, T2, False), (Z8, T8, True)])
def test_choose_temperature_checks_the_fit_on_each_half_against_the_other(
        logits, targets, applied):
    fitted = sn.temperature.fit_temperature(logits, targets, bounds=(0.25, 100.0))
    beta, se = _beta_and_se(logits, targets, fitted)
    z = 0.5 * abs(beta - 1) / se                  # past the standard errors' check
    gain = _gain_of_halves(logits, targets, (0.25, 100.0))
    choice = sn.temperature.choose_temperature(logits, targets, z=z)
    if applied:    # 6 of 8 right: each half's fit lowers the other's NLL, a little
        assert 0 < gain < 1 and choice == (fitted, fitted, "")
    else:
        assert gain < 0 and choice[:2] == (1.0, fitted)
        assert choice.kept == (
            f"fitted on either half of the {len(targets)} held-out samples, T does "
            f"not lower the other half's NLL ({-gain:+.3g} nats in all: a fit carried "
            "by a few samples)")
    # z = 0 applies every fit inside the bounds, without the check on halves
    assert sn.temperature.choose_temperature(logits, targets, z=0.0) == (
        fitted, fitted, "")
