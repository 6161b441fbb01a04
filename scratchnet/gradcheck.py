r"""Checking gradients with central finite differences.

Every backward pass in scratchnet (and in a student's own code) is a claim
about derivatives, and the cheapest way to test such a claim is to wiggle the
input.  For a scalar function :math:`f` of an array :math:`x`, the central
difference

.. math::

    \frac{\partial f}{\partial x_i} \approx
        \frac{f(x + \epsilon e_i) - f(x - \epsilon e_i)}{2 \epsilon}

has error :math:`O(\epsilon^2)` from the Taylor series (the even terms
cancel), plus rounding error of about :math:`u\,|f| / \epsilon` with
:math:`u \approx 10^{-16}` in float64.  With :math:`\epsilon = 10^{-6}` both are
around :math:`10^{-10}` for well-scaled functions, far below the size of a
real bug.  It costs two evaluations of :math:`f` per entry of :math:`x`, so it
is for testing on small inputs, never for training.

:func:`gradient_check` compares an analytic gradient :math:`a` with the
numerical one :math:`n` entry by entry, as a relative error
:math:`|a_i - n_i| / \max(|a_i| + |n_i|, \text{floor})`, and reports the
largest.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np

from ._validation import (
    as_float_array,
    check_bool,
    check_callable,
    check_same_shape,
    check_scalar,
    describe,
)

__all__ = ["gradient_check", "numerical_gradient"]

#: Below this size an entry of the gradient is compared in absolute terms.
FLOOR = 1e-8


def _scalar_value(f: Callable[[np.ndarray], Any], x: np.ndarray) -> float:
    """``f(x)`` as a finite Python float, or a clear error."""
    returned = f(x)
    value = np.asarray(returned)
    if value.dtype.kind not in "fiub":
        raise TypeError(f"f must return a real number; got {describe(returned)}")
    if value.size != 1:
        raise ValueError(
            f"f must return a scalar (the gradient of an array-valued function "
            f"is a Jacobian); got an array of shape {value.shape}"
        )
    value = float(value.reshape(()))
    if not np.isfinite(value):
        raise ValueError(f"f must be finite near x to be differentiated; got {value}")
    return value


def numerical_gradient(f: Callable[[np.ndarray], Any], x: Any,
                       eps: float = 1e-6) -> np.ndarray:
    r"""Gradient of a scalar function by central differences, one entry at a time.

    Parameters
    ----------
    f : callable
        ``f(x) -> scalar``, called with a float64 array of ``x``'s shape.
    x : array_like, any shape
        The point at which to differentiate; it is not modified.
    eps : float, default 1e-6
        The step :math:`\epsilon > 0`.

    Returns
    -------
    ndarray of float64, same shape as ``x``
        :math:`(f(x + \epsilon e_i) - f(x - \epsilon e_i)) / (2\epsilon)` for
        every entry :math:`i`.

    Notes
    -----
    ``f`` receives one float64 copy of ``x`` that is perturbed in place and
    restored after each entry, so ``f`` must not keep a reference to it.  The
    error is :math:`O(\epsilon^2)` truncation plus about
    :math:`10^{-16} |f| / \epsilon` rounding; it is exact (up to rounding)
    for quadratics.  A kink of ``f`` (a ReLU at 0) closer than
    :math:`\epsilon` to ``x`` gives a meaningless value.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.numerical_gradient(lambda x: np.sum(x ** 3), [1.0, -2.0]).round(6)
    array([ 3., 12.])
    """
    f = check_callable(f, "f", "a function f(x) -> scalar")
    eps = check_scalar(eps, "eps", low=0.0, high=math.inf, low_inclusive=False,
                       high_inclusive=False)
    point = np.array(as_float_array(x, "x", allow_inf=False), dtype=np.float64)
    grad = np.empty_like(point)
    flat, flat_grad = point.reshape(-1), grad.reshape(-1)  # views: same memory
    for i in range(flat.size):
        original = flat[i]
        flat[i] = original + eps
        f_plus = _scalar_value(f, point)
        flat[i] = original - eps
        f_minus = _scalar_value(f, point)
        flat[i] = original
        flat_grad[i] = (f_plus - f_minus) / (2.0 * eps)
    return grad


def gradient_check(f: Callable[[np.ndarray], Any],
                   grad: Callable[[np.ndarray], Any] | Any, x: Any,
                   eps: float = 1e-6, *, floor: float = FLOOR,
                   return_index: bool = False
                   ) -> Union[float, Tuple[float, Optional[Tuple[int, ...]]]]:
    r"""Largest relative error between an analytic gradient and central differences.

    Parameters
    ----------
    f : callable
        ``f(x) -> scalar``.
    grad : callable or array_like
        The analytic gradient :math:`a` at ``x``: an array of ``x``'s shape,
        or a callable ``grad(x)`` returning one.
    x : array_like, any shape
        The point at which to compare; it is not modified.
    eps : float, default 1e-6
        Step of :func:`numerical_gradient`.
    floor : float, default 1e-8
        Smallest denominator, so that entries where both gradients are 0
        give 0 rather than 0/0 = NaN.
    return_index : bool, default False
        Also return where the largest error is, as ``np.unique``'s
        ``return_index`` adds an output.

    Returns
    -------
    error : float
        :math:`\max_i |a_i - n_i| / \max(|a_i| + |n_i|, \text{floor})`,
        always in :math:`[0, 1]` (0 for an empty ``x``).
    index : tuple of int or None
        Only with ``return_index=True``: the multi-index of that entry in
        ``x`` (the first one on ties, as ``np.argmax``; ``()`` for a 0-d
        ``x``, None for an empty one), so ``x[index]`` is the entry to look at.

    Raises
    ------
    ValueError
        If ``grad`` holds NaN or an infinity (no relative error is defined),
        or ``f`` is not finite near ``x``.

    Notes
    -----
    How to read the number (float64, well-scaled :math:`f`):

    * below about 1e-6: the gradient is right (typically 1e-8 to 1e-11);
    * 1e-6 to 1e-3: suspicious; check for a kink (ReLU, max) near ``x``, a
      large :math:`|f|`, or gradient entries near the floor, where the
      rounding noise of the differences (about :math:`10^{-16} |f| /
      \epsilon`) is compared with a tiny denominator;
    * above 1e-3: a bug (a wrong sign gives 1, a missing factor 2 gives 1/3).

    Check in float64: in float32 the rounding noise alone is about 1e-2.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> f = lambda x: np.sum(x ** 3)
    >>> x = np.array([1.0, -2.0, 0.5])
    >>> sn.gradient_check(f, lambda x: 3 * x ** 2, x) < 1e-6    # right
    True
    >>> print(f"{sn.gradient_check(f, 2 * x ** 2, x):.4f}")      # wrong: 1/5
    0.2000
    >>> wrong = np.array([3.0, 12.0, 0.0])                       # x[2]'s is off
    >>> error, index = sn.gradient_check(f, wrong, x, return_index=True)
    >>> print(f"{error:.1f} at {index}")
    1.0 at (2,)
    """
    f = check_callable(f, "f", "a function f(x) -> scalar")
    floor = check_scalar(floor, "floor", low=0.0, high=math.inf, low_inclusive=False,
                         high_inclusive=False)
    return_index = check_bool(return_index, "return_index")
    point = as_float_array(x, "x", allow_inf=False)
    analytic = grad(np.array(point, dtype=np.float64)) if callable(grad) else grad
    analytic = as_float_array(analytic, "grad", allow_inf=False)
    check_same_shape(point, analytic, "x", "grad")
    numeric = numerical_gradient(f, point, eps)
    error = np.abs(analytic - numeric)
    error /= np.maximum(np.abs(analytic) + np.abs(numeric), floor)
    if error.size == 0:
        return (0.0, None) if return_index else 0.0
    worst = np.unravel_index(int(np.argmax(error)), error.shape)
    if not return_index:
        return float(error[worst])
    return float(error[worst]), tuple(int(i) for i in worst)
