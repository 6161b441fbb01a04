"""Checks for scores to probabilities and the losses: values and the conventions' edges.

Each check calls the student's function on one input of ``docs/conventions.md``
(large logits, ``-inf`` entries, one class, a batch of one, float32, the empty
batch where it is defined) and compares with the library's function.  Only the
covered arguments are passed, and only NumPy arrays, so a correct minimal NumPy
implementation passes every check.
"""

from __future__ import annotations

import numpy as np

from ..losses import cross_entropy, nll_loss
from ..softmax import log_softmax, logsumexp, softmax
from .diagnoses import equals, nan_where, other_axis, overflowed
from .probes import Failed, expect_close, fd_gradient, show, unchanged
from .protocol import Check

__all__ = ["CHECKS"]

_RNG_LOGITS = np.array([[0.3, -1.2, 2.0, 0.5], [1.5, 0.0, -0.7, -2.2],
                        [-0.4, 0.9, 0.1, 1.3]])
_LARGE = np.array([[1000.0, 0.0, -1000.0], [1e4, 1e4, 0.0]])
_NEG_INF = np.array([[0.0, -np.inf, 1.0], [2.0, -np.inf, -np.inf]])
_LOG_UNDERFLOW = ("log(softmax(x)) underflows to log(0) = -inf where the "
                  "log-probability is finite: compute (x - m) - log(sum(exp(x - m))) "
                  "with m the row maximum")


def _naive_softmax(x):
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)


#: Each row-wise function written without the max shift, the ways students do.
_UNSHIFTED = {
    "softmax": lambda x: [lambda: _naive_softmax(x)],
    "log_softmax": lambda x: [
        lambda: np.log(_naive_softmax(x)),
        lambda: x - np.log(np.sum(np.exp(x), axis=-1, keepdims=True))],
    "logsumexp": lambda x: [lambda: np.log(np.sum(np.exp(x), axis=-1))],
}


def _unshifted_loss(name, z, t):
    """The mean cross-entropy without the max shift; nothing for ``nll_loss``,
    whose inputs are log-probabilities already."""
    if name != "cross_entropy":
        return []
    picked = np.arange(len(t)), t
    return [lambda: -np.mean(np.log(_naive_softmax(z))[picked]),
            lambda: -np.mean(z[picked] - np.log(np.sum(np.exp(z), axis=-1)))]


def _unshifted_ce_grad(z, t):
    """The gradient (softmax - one-hot) / N with the softmax not shifted."""
    return (_naive_softmax(z) - np.eye(z.shape[-1])[t]) / len(t)


def _row_diagnoses(name, ref, x):
    """What may explain a wrong row-wise result: evidence only."""
    found = [other_axis(ref, x)]
    if name == "log_softmax":
        found += [equals(lambda: x - x.max(axis=-1, keepdims=True),
                         "this is x - max(x): the log of the normaliser is missing, "
                         "x - m - log(sum(exp(x - m)))"),
                  lambda got: _LOG_UNDERFLOW if np.isneginf(
                      np.asarray(got, dtype=float)).any() and np.isfinite(ref(x)).all()
                  else ""]
    return [*found, overflowed(x, ref(x), _UNSHIFTED[name](x))]


def _rows(name, ref):
    """The row-wise diagnoses as one ``diagnosis(got, inputs)`` of a check."""
    def diagnosis(got, inputs):
        return next((h for h in (d(got) for d in _row_diagnoses(name, ref, inputs[0]))
                     if h), "")
    return diagnosis


def _elementwise(name, ref):
    """The checks of a row-wise function (softmax, log_softmax, logsumexp), as data."""
    def case(label, x, text, **kw):
        return Check(label, inputs=lambda: (x.copy(),), reference=ref,
                     what=f"{name}(x) for {text}" + "{0}", **kw)

    neg_inf = nan_where(ref(_NEG_INF), "-inf is a logit of probability 0: exp(-inf) "
                        "= 0 needs no special case once each row is shifted by its "
                        "finite maximum")
    return [case("values", _RNG_LOGITS, "x = ", diagnoses=(_rows(name, ref),)),
            case("one sample", _RNG_LOGITS[0], "one sample, x = "),
            case("large logits", _LARGE, "large logits x = ",
                 diagnoses=(_rows(name, ref),)),
            case("-inf entries", _NEG_INF, "-inf entries (probability 0), x = ",
                 diagnoses=(lambda got, inputs: neg_inf(got),)),
            case("one class", np.array([[3.0], [-2.0]]), "one class, x = "),
            case("batch of one", _RNG_LOGITS[:1], "a batch of one, x = "),
            case("float32 kept", _RNG_LOGITS.astype(np.float32), "float32 x = ",
                 rtol=1e-5, atol=1e-6, dtype=np.float32),
            case("empty batch", np.zeros((0, 3)), "an empty batch, x = "),
            Check("inputs unchanged", run=lambda f: _kept(f, name))]


def _kept(f, name):
    """The one check that charges a function writing into its input."""
    x = _RNG_LOGITS.copy()
    f(x)
    unchanged([x], [_RNG_LOGITS], ["x"], f"{name}(x)")


def _log_softmax_underflow(f):
    x = np.array([[2.0, -1e4, -48.0]])   # not 0 at the maximum: x itself is wrong
    expect_close(f(x.copy()), log_softmax(x), f"log_softmax(x) for x = {show(x)}",
                 diagnoses=_row_diagnoses("log_softmax", log_softmax, x))


def _logsumexp_all_neg_inf(f):
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, 0.0, 0.0]])
    want = logsumexp(x)
    expect_close(f(x.copy()), want, f"logsumexp(x) for a row of -inf, x = {show(x)}",
                 diagnoses=[lambda got: "a row of -inf has max -inf, and -inf - (-inf) "
                            "is NaN: use a finite shift for such a row (logsumexp is "
                            "-inf there)" if np.isnan(
                                np.asarray(got, dtype=float)).any() else ""])


_TARGETS = np.array([2, 0, 3])


def _loss_checks(name, student_input, ref):
    """Checks of a mean loss of class targets (cross_entropy, nll_loss)."""
    def prepare(logits):  # a new array: the student may write into it
        return np.array(student_input(logits), dtype=float)

    def log_probs(z):   # what the loss picks its terms from
        with np.errstate(all="ignore"):
            return z if name == "nll_loss" else log_softmax(z)

    def values(f):
        z = prepare(_RNG_LOGITS)
        got = f(z.copy(), _TARGETS.copy())
        if np.ndim(got) != 0:
            raise Failed(f"{name}({show(z)}, targets={_TARGETS}) returned "
                         f"{show(got)}", "return the mean over the batch, one number")
        want = ref(z, _TARGETS)
        expect_close(got, want, f"{name}({show(z)}, targets={_TARGETS})",
                     n=len(_TARGETS), diagnoses=[equals(
                         lambda: want / z.shape[1], "the loss is averaged over the "
                         f"M = {z.shape[1]} classes too: sum over the classes, mean "
                         "over the batch"), _every_column(log_probs(z), _TARGETS)])

    def large(f):
        z = prepare(_LARGE)
        t = np.array([1, 2])
        expect_close(f(z.copy(), t.copy()), ref(z, t),
                     f"{name} for large logits {show(z)}, targets={t}",
                     diagnoses=[overflowed(z, ref(z, t), _unshifted_loss(name, z, t)),
                                _every_column(log_probs(z), t)])

    def neg_inf(f):
        z = prepare(_NEG_INF)
        t = np.array([2, 0])
        expect_close(f(z.copy(), t.copy()), ref(z, t),
                     f"{name} for {show(z)} (-inf: probability 0), targets={t}",
                     diagnoses=[_times_one_hot(log_probs(z), t),
                                _every_column(log_probs(z), t)])

    def one_class(f):
        z, t = prepare(np.array([[3.0], [-2.0]])), np.array([0, 0])
        expect_close(f(z.copy(), t.copy()), ref(z, t),
                     f"{name} for one class, {show(z)}")

    def batch_of_one(f):
        z, t = prepare(_RNG_LOGITS[:1]), np.array([1])
        expect_close(f(z.copy(), t.copy()), ref(z, t),
                     f"{name} for a batch of one, {show(z)}")

    def inputs_kept(f):
        z = prepare(_RNG_LOGITS)
        copy = z.copy()
        f(z, _TARGETS.copy())
        unchanged([z], [copy], ["its input"], f"{name}(...)")

    return [("values", values), ("large logits", large), ("-inf entries", neg_inf),
            ("one class", one_class), ("batch of one", batch_of_one),
            ("inputs unchanged", inputs_kept)]


def _times_one_hot(lp, t):
    """The -inf hint, on its evidence: the loss as -mean(sum(one_hot * log q)) of
    the log-probabilities ``lp``, where 0 * -inf is NaN."""
    def candidate():
        with np.errstate(all="ignore"):
            return -np.mean(np.sum(np.eye(lp.shape[-1])[t] * lp, axis=-1))
    return equals(candidate, "a class of probability 0 that is not the target costs "
                             "nothing: do not multiply -inf by 0 (pick each row's "
                             "target, log_probs[np.arange(N), targets])")


def _every_column(lp, t):
    """Fancy indexing with the targets alone: every row's entries at every target
    of the log-probabilities ``lp``."""
    return equals(lambda: -np.mean(lp[:, t]),
                  "log_probs[:, targets] takes every row's entries at every target, "
                  "N x N of them: pair row j with targets[j], "
                  "log_probs[np.arange(N), targets]")


def _ce_grad_reference(z, t):
    n = z.shape[0]
    p = softmax(z)
    p[np.arange(n), t] -= 1
    return p / n


def _grad_checks():
    def values(f):
        z = _RNG_LOGITS.copy()
        expect_close(f(z.copy(), _TARGETS.copy()), _ce_grad_reference(z, _TARGETS),
                     f"cross_entropy_grad({show(z)}, targets={_TARGETS})", n=3)

    def finite_differences(f):
        z = _RNG_LOGITS.copy()
        numeric = fd_gradient(lambda: float(cross_entropy(z, _TARGETS)), z)
        expect_close(f(z.copy(), _TARGETS.copy()), numeric,
                     "cross_entropy_grad against central differences of the loss "
                     f"at {show(z)}", rtol=1e-5, atol=1e-7, n=3)

    def large(f):
        z, t = _LARGE.copy(), np.array([1, 2])
        expect_close(f(z.copy(), t.copy()), _ce_grad_reference(z, t),
                     f"cross_entropy_grad for large logits {show(z)}", n=2,
                     diagnoses=[overflowed(z, _ce_grad_reference(z, t),
                                           [lambda: _unshifted_ce_grad(z, t)])])

    def neg_inf(f):
        z, t = _NEG_INF.copy(), np.array([2, 0])
        expect_close(f(z.copy(), t.copy()), _ce_grad_reference(z, t),
                     f"cross_entropy_grad for {show(z)} (-inf: probability 0)", n=2)

    def float32(f):
        z = _RNG_LOGITS.astype(np.float32)
        expect_close(f(z.copy(), _TARGETS.copy()), _ce_grad_reference(z, _TARGETS),
                     f"cross_entropy_grad for float32 logits {show(z)}", rtol=1e-5,
                     atol=1e-6, dtype=np.float32, n=3)

    def inputs_kept(f):
        z = _RNG_LOGITS.copy()
        f(z, _TARGETS.copy())
        unchanged([z], [_RNG_LOGITS], ["logits"], "cross_entropy_grad(logits, targets)")

    return [("values", values), ("finite differences", finite_differences),
            ("large logits", large), ("-inf entries", neg_inf),
            ("float32 kept", float32), ("inputs unchanged", inputs_kept)]


CHECKS = {
    "logsumexp": [*_elementwise("logsumexp", logsumexp),
                  Check("a row of -inf", run=_logsumexp_all_neg_inf)],
    "softmax": _elementwise("softmax", softmax),
    "log_softmax": [*_elementwise("log_softmax", log_softmax),
                    Check("no underflow", run=_log_softmax_underflow)],
    "nll_loss": _loss_checks("nll_loss", log_softmax, nll_loss),
    "cross_entropy": _loss_checks("cross_entropy", np.asarray, cross_entropy),
    "cross_entropy_grad": _grad_checks(),
}
