"""Hints from evidence: a diagnosis speaks only when its mistake explains the outputs.

Each function here takes what came back (and the inputs it was computed
from) and returns a hint only when recomputing the mistake it names gives
exactly that output: the reference over the other axis, ``x - max(x)`` as a
log-softmax, a mean over the classes, KL(q || p) for KL(p || q), a network's
backward without its activation, an overflow where the input was large.
Otherwise it returns "", and the message says what differs and where.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["close", "equals", "missing_activation", "nan_where", "other_axis",
           "overflowed", "step_hint", "update_hint"]

#: log of the largest float64: exp overflows above it.
_LOG_MAX = float(np.log(np.finfo(np.float64).max))

OVERFLOW = ("exp overflowed: subtract each row's maximum before exp "
            "(x - x.max(axis=-1, keepdims=True)); the result does not change")


def close(got: Any, candidate: Any, rtol: float = 1e-6,
          atol: float = 1e-9) -> bool:
    """Whether ``got`` is ``candidate`` (same shape, values within tolerance).

    Parameters
    ----------
    got, candidate : array_like
    rtol, atol : float
        Tolerances (NaN matches NaN).

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> close(np.ones(2), np.ones(2)), close(np.ones(2), np.ones(3))
    (True, False)
    """
    try:
        a, b = np.asarray(got, dtype=float), np.asarray(candidate, dtype=float)
    except (TypeError, ValueError):
        return False
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol,
                                                   equal_nan=True))


def equals(candidate: Callable[[], Any], hint: str) -> Callable[[Any], str]:
    """A diagnosis: ``hint`` when the output is ``candidate()``, the mistake recomputed.

    Parameters
    ----------
    candidate : callable
        No arguments: what the mistake gives on the check's inputs.
    hint : str

    Returns
    -------
    callable
        ``diagnosis(got) -> str``.

    Examples
    --------
    >>> import numpy as np
    >>> d = equals(lambda: np.zeros(2), "all zeros")
    >>> d(np.zeros(2)), d(np.ones(2))
    ('all zeros', '')
    """
    def diagnosis(got: Any) -> str:
        with np.errstate(all="ignore"):
            return hint if close(got, candidate()) else ""
    return diagnosis


def other_axis(ref: Callable, x: np.ndarray) -> Callable[[Any], str]:
    """A diagnosis: the output is the reference computed over the first axis.

    Parameters
    ----------
    ref : callable
        The reference, over the last axis.
    x : ndarray, shape (N, M)
        The input.

    Returns
    -------
    callable
        ``diagnosis(got) -> str``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0, 1.0], [2.0, 5.0]])
    >>> print(other_axis(lambda a: a - a.max(-1, keepdims=True), x)(x - x.max(0))[:43])
    the result is computed over the wrong axis:
    """
    def candidate():
        out = ref(np.ascontiguousarray(x.T))
        return out.T if np.ndim(out) == 2 else out
    return equals(candidate, "the result is computed over the wrong axis: the classes "
                             "are on the last axis (axis=-1)")


def overflowed(x: np.ndarray, expected: Any,
               unshifted: Sequence[Callable[[], Any]] = ()) -> Callable[[Any], str]:
    """A diagnosis: the output is what the formula without the max shift gives.

    Parameters
    ----------
    x : ndarray
        The input (rows on the last axis).
    expected : array_like
        The reference's result.
    unshifted : sequence of callables, optional
        No arguments each: the mistake recomputed, the formula with ``exp(x)``
        where ``exp(x - max)`` belongs (one callable per way of writing it).

    Returns
    -------
    callable
        ``diagnosis(got) -> str``: the overflow hint when ``got`` is one of
        the ``unshifted`` results (NaN and infinities in the same places) and
        non-finite where the expected value is finite.  Without ``unshifted``:
        when the non-finite entries lie only in rows where ``exp`` overflows
        (an entry above ``log`` of the largest float).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1000.0, 0.0], [1.0, 2.0]])
    >>> naive = lambda: np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    >>> d = overflowed(x, np.array([[1.0, 0.0], [0.27, 0.73]]), [naive])
    >>> with np.errstate(all="ignore"):
    ...     d(naive())[:14], d(np.array([[0.5, np.nan], [0.27, 0.73]]))
    ('exp overflowed', '')
    """
    def diagnosis(got: Any) -> str:
        try:
            g = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            return ""
        e = np.asarray(expected, dtype=float)
        if g.shape != e.shape:
            return ""
        bad = (np.isnan(g) | np.isinf(g)) & np.isfinite(e)
        if not bad.any():
            return ""
        if unshifted:
            with np.errstate(all="ignore"):
                return OVERFLOW if any(close(g, mistake()) for mistake in unshifted) \
                    else ""
        overflows = np.where(np.isfinite(x), x, -np.inf).max(axis=-1) > _LOG_MAX
        bad_rows = bad.any(axis=-1) if g.ndim == x.ndim and g.ndim else bad
        return OVERFLOW if np.all(overflows[np.asarray(bad_rows)]) else ""
    return diagnosis


def nan_where(expected: Any, hint: str) -> Callable[[Any], str]:
    """A diagnosis: the output is NaN (or infinite) where the expected value is finite.

    Parameters
    ----------
    expected : array_like
    hint : str

    Returns
    -------
    callable
        ``diagnosis(got) -> str``.

    Examples
    --------
    >>> import numpy as np
    >>> nan_where(np.array([0.0]), "0 * log 0")(np.array([np.nan]))
    '0 * log 0'
    """
    def diagnosis(got: Any) -> str:
        try:
            g, e = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
        except (TypeError, ValueError):
            return ""
        return hint if g.shape == e.shape and np.any(~np.isfinite(g) & np.isfinite(e)) \
            else ""
    return diagnosis


def missing_activation(got: Any, ref: Any, x: np.ndarray, dlogits: np.ndarray) -> str:
    """The hint when a network's gradients are a backward's without its activation.

    Parameters
    ----------
    got : dict
        The gradients that came back.
    ref : TwoLayerMLP
        The chapter's network with the same parameters.
    x, dlogits : ndarray

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.mlp import TwoLayerMLP
    >>> net = TwoLayerMLP(2, 3, 2, rng=0)
    >>> x, d = np.ones((4, 2)), np.ones((4, 2))
    >>> skip = {"W1": x.T @ (d @ net.params["W2"].T)}
    >>> missing_activation(skip, net, x, d)[:40]
    'these are the gradients of a backward th'
    """
    if not isinstance(got, dict) or "W1" not in got:
        return ""
    P = ref.params
    dz = dlogits @ P["W2"].T     # the activation's backward left out
    if close(got["W1"], x.reshape(len(x), -1).T @ dz):
        return ("these are the gradients of a backward that skips the activation: "
                "pass dh through relu_backward (or tanh_backward) before the first "
                "layer's linear_backward")
    return ""


def update_hint(before: np.ndarray, got: np.ndarray, want: np.ndarray) -> str:
    """The hint when an update rule left the parameter as it was, or climbed the loss.

    Parameters
    ----------
    before, got, want : ndarray
        The parameter before the step, after the student's step, after the
        reference's.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> update_hint(np.zeros(2), np.ones(2), -np.ones(2))[:25]
    'the update climbs the los'
    """
    if np.allclose(got, before):
        return ("the parameter did not change: update it in place (param -= ..., "
                "param[...] = ...); param = param - ... makes a new array")
    if np.allclose(got - before, -(want - before), rtol=1e-4):
        return ("the update climbs the loss: a step goes against the gradient, "
                "param -= lr * (...)")
    return ""


def step_hint(before: np.ndarray, got: np.ndarray, want: np.ndarray) -> str:
    """The hint of a training step's parameters about the step's own code: the
    update rule is given there, never blamed.

    Parameters
    ----------
    before, got, want : ndarray
        As for :func:`update_hint`.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> step_hint(np.zeros(2), np.ones(2), -np.ones(2)).endswith("the wrong sign")
    True
    """
    if np.allclose(got, before):
        return ("the parameters did not change: hand the gradients of the loss to "
                "optimizer.step(grads)")
    if np.allclose(got - before, -(want - before), rtol=1e-4):
        return ("the parameters moved up the loss, exactly as far as the step should "
                "move them down: the gradients handed to optimizer.step have the "
                "wrong sign")
    return ""
