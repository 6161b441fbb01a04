"""Checks for information, Bayes' rule and the layers: values, gradients, inputs kept.

The backward passes are checked three ways: against the library's backward,
against central finite differences of the forward pass (independent of any
backward), and for what they must not do, write into ``dout`` or the cache.
The weight gradient is also checked with a square ``W``, where a transposed
``dW`` has the right shape and only its values give it away.
"""

from __future__ import annotations

import numpy as np

from ..information import entropy, kl_divergence
from ..layers import linear_backward, linear_forward, relu_backward, tanh_backward
from ..two_gaussians import two_gaussian_posterior
from .diagnoses import equals, nan_where
from .probes import Failed, expect_close, expect_each, fd_gradient, show, unchanged

__all__ = ["CHECKS"]

_P = np.array([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]])
_Q = np.array([[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]])
_ZERO_LOG_ZERO = ("0 log 0 = 0: leave out the terms where p = 0 "
                  "(np.where(p > 0, p * np.log(p), 0.0)), or their NaN spreads")


def _epsilon(expected):
    def diagnosis(got):
        try:
            gap = np.abs(np.asarray(got, dtype=float) - expected).max()
        except (TypeError, ValueError):
            return ""
        return (f"off by {gap:.1e}: an epsilon added to p (p + 1e-12) changes the "
                "result; leave the terms with p = 0 out instead") if 0 < gap < 1e-6 \
            else ""
    return diagnosis


def _entropy_checks():
    def values(f):
        for p in (_P, _P[0]):
            expect_close(f(p.copy()), entropy(p), f"entropy(p) for p = {show(p)}")

    def zeros(f):
        p = np.array([[1.0, 0.0, 0.0], [0.5, 0.0, 0.5]])
        got = f(p.copy())
        expect_close(got, entropy(p), f"entropy(p) for p = {show(p)}", atol=1e-13,
                     diagnoses=[nan_where(entropy(p), _ZERO_LOG_ZERO),
                                _epsilon(entropy(p))])

    def one_outcome(f):
        p = np.array([[1.0], [1.0]])
        expect_close(f(p.copy()), entropy(p), f"entropy(p) for one outcome, {show(p)}")

    return [("values", values), ("0 log 0 = 0", zeros), ("one outcome", one_outcome),
            ("inputs unchanged", _kept("entropy", _P))]


def _kl_checks():
    def values(f):
        for p, q in ((_P, _Q), (_P[0], _Q[0])):
            expect_close(f(p.copy(), q.copy()), kl_divergence(p, q),
                         f"kl_divergence(p, q) for p = {show(p)}, q = {show(q)}",
                         diagnoses=[equals(lambda p=p, q=q: kl_divergence(q, p),
                                           "this is KL(q || p): the arguments are "
                                           "swapped; KL(p || q) = sum p log(p / q)")])

    def zeros(f):
        p, q = np.array([1.0, 0.0]), np.array([0.5, 0.5])
        expect_close(f(p.copy(), q.copy()), kl_divergence(p, q),
                     f"kl_divergence(p, q) for p = {show(p)}, q = {show(q)}",
                     diagnoses=[nan_where(kl_divergence(p, q), _ZERO_LOG_ZERO)])

    def impossible(f):
        p, q = np.array([0.5, 0.5]), np.array([1.0, 0.0])
        got = f(p.copy(), q.copy())
        expect_close(got, np.inf,
                     f"kl_divergence(p, q) for p = {show(p)}, q = {show(q)}",
                     diagnoses=[lambda g: "p > 0 = q is +inf: the model called "
                                "impossible something that happens" if
                                np.all(np.isfinite(np.asarray(g, dtype=float)))
                                else ""])

    def itself(f):
        expect_close(f(_P.copy(), _P.copy()), np.zeros(2), "kl_divergence(p, p)",
                     atol=1e-12)

    return [("values", values), ("0 log 0 = 0", zeros),
            ("q = 0 < p is inf", impossible), ("KL(p || p) = 0", itself),
            ("inputs unchanged", _kept("kl_divergence", _P, _Q))]


def _kept(name, *arrays):
    """The check that charges a function writing into its arguments: the one."""
    names = ["p", "q"][:len(arrays)]

    def check(f):
        given = [a.copy() for a in arrays]
        f(*given)
        unchanged(given, arrays, names, f"{name}({', '.join(names)})")
    return check


_SETTINGS = [(0.0, 1.0, 3.0, 1.0, 0.5), (0.0, 2.0, 1.0, 1.0, 0.5),
             (0.0, 2.0, 3.0, 1.0, 0.3)]


def _posterior_checks():
    x = np.linspace(-6.0, 10.0, 17)

    def make(setting, label):
        def check(f):
            expect_close(f(x.copy(), *setting), two_gaussian_posterior(x, *setting),
                         f"two_gaussian_posterior(x, {', '.join(map(str, setting))}) "
                         f"for x = {show(x)}", rtol=1e-6, atol=1e-12,
                         diagnoses=[equals(lambda: _no_sigma_factor(x, *setting),
                                           "the densities' 1/sigma factors are "
                                           "missing: they do not cancel when the "
                                           "sigmas differ")])
        return label, check

    def far_tails(f):
        far = np.array([-40.0, -20.0, 25.0, 40.0])
        want = two_gaussian_posterior(far, *_SETTINGS[0])
        expect_close(f(far.copy(), *_SETTINGS[0]), want,
                     f"two_gaussian_posterior(x, {', '.join(map(str, _SETTINGS[0]))}) "
                     f"far in the tails, x = {show(far)}", rtol=1e-6, atol=1e-12,
                     diagnoses=[nan_where(want, "both densities underflow to 0 far "
                                          "from the means, and 0/0 is NaN: compute "
                                          "the log-odds (a difference of log "
                                          "densities) and apply the sigmoid")])

    def any_shape(f):
        grid = x[:16].reshape(4, 4)
        expect_close(f(grid.copy(), *_SETTINGS[1]),
                     two_gaussian_posterior(grid, *_SETTINGS[1]),
                     f"two_gaussian_posterior for x of shape (4, 4), x = {show(grid)}")

    def kept(f):
        z = x.copy()
        f(z, *_SETTINGS[0])
        unchanged([z], [x], ["x"], "two_gaussian_posterior(x, ...)")

    return [make(_SETTINGS[0], "equal variances"),
            make(_SETTINGS[1], "unequal variances"),
            make(_SETTINGS[2], "unequal priors"), ("far tails", far_tails),
            ("any shape", any_shape), ("inputs unchanged", kept)]


def _no_sigma_factor(x, mu1, sigma1, mu2, sigma2, prior1=0.5):
    a = prior1 * np.exp(-0.5 * ((x - mu1) / sigma1) ** 2)
    b = (1 - prior1) * np.exp(-0.5 * ((x - mu2) / sigma2) ** 2)
    return a / (a + b)


def _linear_case(n, d, m, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(dtype)
    W = rng.standard_normal((d, m)).astype(dtype)
    b = rng.standard_normal(m).astype(dtype)
    dout = rng.standard_normal((n, m)).astype(dtype)
    return x, W, b, dout


def _call_linear(f, x, W, b, dout):
    _, cache = linear_forward(x, W, b)
    got = f(dout, cache)
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise Failed(f"linear_backward returned {show(got)}", "return the three "
                     "gradients dx, dW, db, in that order")
    return got


def _linear_checks():
    def compare(f, case, label, **kw):
        x, W, b, dout = case
        got = _call_linear(f, x.copy(), W.copy(), b.copy(), dout.copy())
        want = linear_backward(dout, (x, W))
        expect_each([(name, lambda g=g, e=e, name=name: expect_close(
            g, e, f"{name} of linear_backward for {label}, x = {show(x)}, "
            f"W = {show(W)}, dout = {show(dout)}", n=x.shape[0], **kw))
            for name, g, e in zip(("dx", "dW", "db"), got, want)])

    def values(f):
        compare(f, _linear_case(4, 3, 2), "x (4, 3), W (3, 2)")

    def square(f):
        compare(f, _linear_case(3, 3, 3), "a square W (3, 3)")

    def finite_differences(f):
        x, W, b, dout = _linear_case(3, 2, 2, seed=1)
        got = _call_linear(f, x.copy(), W.copy(), b.copy(), dout.copy())
        def loss():
            return float((linear_forward(x, W, b)[0] * dout).sum())

        expect_each([(name, lambda arr=arr, g=g, name=name: expect_close(
            g, fd_gradient(loss, arr), f"{name} of linear_backward against central "
            "differences of sum(out * dout)", rtol=1e-5, atol=1e-7, n=3))
            for name, arr, g in zip(("dx", "dW", "db"), (x, W, b), got)])

    def batch_of_one(f):
        compare(f, _linear_case(1, 3, 2), "a batch of one")

    def float32(f):
        compare(f, _linear_case(4, 3, 2, np.float32), "float32", rtol=1e-5, atol=1e-6,
                dtype=np.float32)

    def inputs_kept(f):
        x, W, b, dout = _linear_case(4, 3, 2)
        copies = [a.copy() for a in (x, W, dout)]
        _call_linear(f, x, W, b, dout)
        names = ["x (in the cache)", "W (in the cache)", "dout"]
        unchanged([x, W, dout], copies, names, "linear_backward(dout, cache)")

    return [("values", values), ("square W", square),
            ("finite differences", finite_differences), ("batch of one", batch_of_one),
            ("float32 kept", float32), ("inputs unchanged", inputs_kept)]


def _activation_checks(name, forward, ref, hint):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5))
    x[x == 0] = 0.5
    dout = rng.standard_normal((4, 5))

    def cache_of(z):
        return z.copy() if name == "relu_backward" else np.tanh(z)

    def values(f):
        got = f(dout.copy(), cache_of(x))
        expect_close(got, ref(dout, cache_of(x)),
                     f"{name}(dout, cache) for x = {show(x)}, dout = {show(dout)}",
                     hint=hint(got, dout, cache_of(x)))

    def finite_differences(f):
        z = x.copy()
        numeric = fd_gradient(lambda: float((forward(z) * dout).sum()), z)
        got = f(dout.copy(), cache_of(x))
        expect_close(got, numeric, f"{name} against central differences of "
                     "sum(out * dout)", rtol=1e-5, atol=1e-7,
                     hint=hint(got, dout, cache_of(x)))

    def float32(f):
        d32, c32 = dout.astype(np.float32), cache_of(x).astype(np.float32)
        expect_close(f(d32.copy(), c32.copy()), ref(d32, c32), f"{name} for float32",
                     rtol=1e-5, atol=1e-6, dtype=np.float32)

    def empty_batch(f):
        d, c = np.zeros((0, 5)), np.zeros((0, 5))
        expect_close(f(d, c), ref(d, c), f"{name} for an empty batch, shape (0, 5)")

    def inputs_kept(f):
        d, c = dout.copy(), cache_of(x)
        copies = [d.copy(), c.copy()]
        f(d, c)
        unchanged([d, c], copies, ["dout", "cache"], f"{name}(dout, cache)")

    def at_zero(f):
        z = np.array([[0.0, 1.0, -1.0], [0.0, 0.0, 2.0]])
        d = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        want = ref(d, cache_of(z))
        got = f(d.copy(), cache_of(z))
        expect_close(got, want, f"{name}(dout, cache) at x = 0, x = {show(z)}, dout "
                     f"= {show(d)}", diagnoses=[equals(
                         lambda: d * (z >= 0), "at x = 0 the gradient is 0 by the "
                         "chapter's convention (x > 0, not x >= 0)")])

    checks = [("values", values), ("finite differences", finite_differences),
              ("float32 kept", float32), ("empty batch", empty_batch),
              ("inputs unchanged", inputs_kept)]
    return [*checks, ("at x = 0", at_zero)] if name == "relu_backward" else checks


def _relu_hint(got, dout, cache):
    if np.shape(got) == dout.shape and np.allclose(got, dout):
        return ("the ReLU mask is missing: the gradient passes only where the input "
                "was > 0 (dout * (x > 0))")
    return ""


def _tanh_hint(got, dout, cache):
    twice = dout * (1 - np.tanh(cache) ** 2)
    if np.shape(got) == dout.shape and np.allclose(got, twice):
        return ("the cache is already y = tanh(x): tanh'(x) = 1 - y**2, "
                "so dout * (1 - y**2), without another tanh")
    return ""


CHECKS = {
    "entropy": _entropy_checks(),
    "kl_divergence": _kl_checks(),
    "two_gaussian_posterior": _posterior_checks(),
    "linear_backward": _linear_checks(),
    "relu_backward": _activation_checks(
        "relu_backward", lambda z: np.maximum(z, 0.0), relu_backward,
        _relu_hint),
    "tanh_backward": _activation_checks("tanh_backward", np.tanh, tanh_backward,
                                        _tanh_hint),
}
