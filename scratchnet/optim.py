r"""Optimisers: stochastic gradient descent (with momentum) and Adam.

Training moves the parameters :math:`\theta` against the gradient of the
mini-batch loss, :math:`g_t = \nabla_\theta L_t(\theta_{t-1})`, an unbiased
estimate of the gradient of the population loss.  Plain SGD takes

.. math::

    \theta_t = \theta_{t-1} - \eta\, g_t ,

and because the population loss is minimised by the Bayes posterior (Gibbs'
inequality), plain SGD on the cross-entropy heads for the posterior.
Momentum averages successive gradients; Adam divides each coordinate by a
running estimate of the gradient's root mean square.  Both follow PyTorch's
``torch.optim.SGD`` and ``torch.optim.Adam`` update rules exactly (the
formulas are in each class's Notes), so results can be compared with the
original PyTorch experiments.

Every optimiser updates the arrays of ``params`` **in place** (the model sees
the change) and keeps its state (momentum buffer, moment estimates) in one
flat vector.  When the parameters and gradients are consecutive views of one
flat vector each, as a :class:`scratchnet.MLP`'s are, the whole update is a
handful of vectorised operations on those vectors; any other dict of arrays
is updated array by array with the same code.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Mapping, Sequence, Tuple

import numpy as np

from ._validation import check_scalar

__all__ = ["SGD", "Adam"]


def _flat_base(arrays: Sequence[np.ndarray]) -> np.ndarray | None:
    """The 1-D array that ``arrays`` tile exactly, in order, as C-contiguous views.

    Returns None unless every array is a view of the same one-dimensional
    base, the first starting at its beginning and each starting where the
    previous one ends, the last ending at its end.
    """
    base = arrays[0].base if arrays else None
    if not (isinstance(base, np.ndarray) and base.ndim == 1
            and base.flags.c_contiguous):
        return None
    address = base.__array_interface__["data"][0]
    for a in arrays:
        if (a.base is not base or a.dtype != base.dtype or not a.flags.c_contiguous
                or a.__array_interface__["data"][0] != address):
            return None
        address += a.nbytes
    if address != base.__array_interface__["data"][0] + base.nbytes:
        return None
    return base


class _Optimizer:
    """Shared machinery: parameter checks, flat state, the two update paths.

    A subclass names its per-parameter state vectors in ``_slots`` (plus
    scratch vectors) and implements ``_update(p, g, *slots)`` for arrays of
    any shape; ``step`` calls it once on the flat vectors when it can, else
    once per parameter array on matching views.
    """

    _slots: Tuple[str, ...] = ()

    def __init__(self, params: Mapping[str, np.ndarray], lr: float) -> None:
        if not isinstance(params, Mapping) or not params:
            raise TypeError("params must be a non-empty dict of name -> ndarray "
                            f"(like model.params); got {type(params).__name__}")
        for name, p in params.items():
            if not isinstance(p, np.ndarray) or p.dtype.kind != "f":
                raise TypeError(f"params[{name!r}] must be a floating ndarray (it is "
                                f"updated in place); got {type(p).__name__}"
                                + (f" of dtype {p.dtype}" if isinstance(p, np.ndarray)
                                   else ""))
            if not p.flags.writeable:
                raise ValueError(f"params[{name!r}] must be writeable (it is updated "
                                 "in place)")
        self.params = params
        self._keys = tuple(params)
        self._arrays = tuple(params[k] for k in self._keys)
        self._flat = _flat_base(self._arrays)
        size = sum(p.size for p in self._arrays)
        dtype = np.result_type(*self._arrays)
        self._flat_slots = [np.zeros(size, dtype) for _ in self._slots]
        self._slot_views = []  # per parameter: its view of every slot
        start = 0
        for p in self._arrays:
            stop = start + p.size
            self._slot_views.append([s[start:stop].reshape(p.shape)
                                     for s in self._flat_slots])
            start = stop
        self._checked: Tuple[Any, np.ndarray | None] = (None, None)
        self.lr = lr
        self.steps = 0  # number of updates made

    @property
    def lr(self) -> float:
        """The learning rate :math:`\\eta > 0` (settable, e.g. by a schedule)."""
        return self._lr

    @lr.setter
    def lr(self, value: float) -> None:
        self._lr = check_scalar(value, "lr", low=0.0, low_inclusive=False,
                                high=math.inf, high_inclusive=False)

    def _grads_flat(self, grads: Mapping[str, Any]) -> np.ndarray | None:
        """Check ``grads`` against ``params`` (once per set of arrays) and
        return the flat vector they tile, if any."""
        checked, flat = self._checked
        try:
            if checked is not None and len(grads) == len(checked) and all(
                    map(operator.is_, map(grads.__getitem__, self._keys), checked)):
                return flat  # the very arrays checked before
        except (KeyError, TypeError, IndexError):
            pass  # not the same dict of arrays: check it properly below
        if not isinstance(grads, Mapping):
            raise TypeError("grads must be a dict like params; got "
                            f"{type(grads).__name__}")
        if set(grads) != set(self._keys):
            missing = sorted(set(self._keys) - set(grads))
            extra = sorted(set(grads) - set(self._keys))
            raise ValueError(f"grads must have the keys of params "
                             f"{sorted(self._keys)}; missing {missing}, "
                             f"unexpected {extra}")
        arrays = []
        for k, p in zip(self._keys, self._arrays):
            g = grads[k]
            if not isinstance(g, np.ndarray) or g.dtype.kind not in "fiu":
                raise TypeError(f"grads[{k!r}] must be a real ndarray; got "
                                f"{type(g).__name__}")
            if g.shape != p.shape:
                raise ValueError(f"grads[{k!r}] must have the shape of params[{k!r}] "
                                 f"{p.shape}; got {g.shape}")
            arrays.append(g)
        flat = _flat_base(arrays) if self._flat is not None else None
        self._checked = (tuple(arrays), flat)
        return flat

    def step(self, grads: Mapping[str, np.ndarray]) -> None:
        """Update every parameter in place from its gradient.

        Parameters
        ----------
        grads : dict of str to ndarray
            The same keys and shapes as ``params`` (e.g. from
            ``model.loss_and_grads``).  NaN is not checked for: it propagates
            into the parameters (the training loop reports the loss that
            becomes NaN).

        Returns
        -------
        None
        """
        flat_grads = self._grads_flat(grads)
        self.steps += 1
        self._prepare()
        if flat_grads is not None:
            self._update(self._flat, flat_grads, *self._flat_slots)
        else:
            for key, p, slots in zip(self._keys, self._arrays, self._slot_views):
                self._update(p, grads[key], *slots)

    def _prepare(self) -> None:
        """Per-step scalars shared by every array (e.g. bias corrections)."""

    def _update(self, p: np.ndarray, grad: np.ndarray, *slots: np.ndarray) -> None:
        raise NotImplementedError


class SGD(_Optimizer):
    r"""Stochastic gradient descent, optionally with momentum and weight decay.

    Parameters
    ----------
    params : dict of str to ndarray
        The arrays to train (``model.params``), updated in place.
    lr : float
        Learning rate :math:`\eta > 0`; the attribute ``.lr`` may be changed
        between steps (a schedule).
    momentum : float, default 0.0
        :math:`\mu \ge 0`; 0 is plain SGD.
    weight_decay : float, default 0.0
        :math:`\lambda \ge 0`, an L2 penalty :math:`\frac\lambda2 \|\theta\|^2`
        added to the loss.

    Notes
    -----
    With :math:`g_t` the gradient, as in ``torch.optim.SGD`` (no dampening,
    no Nesterov):

    .. math::

        g_t &\leftarrow g_t + \lambda \theta_{t-1} \\
        b_t &= \mu b_{t-1} + g_t \quad (b_1 = g_1) \\
        \theta_t &= \theta_{t-1} - \eta\, b_t \quad (\theta_t = \theta_{t-1} - \eta g_t
        \text{ if } \mu = 0) .

    The defaults are plain SGD with no penalty, so the point training heads
    for is the minimiser of the cross-entropy alone, which is the Bayes
    posterior; weight decay would pull it towards small weights instead.

    Examples
    --------
    >>> import scratchnet as sn
    >>> params = {"w": np.array([1.0, 2.0])}
    >>> opt = sn.SGD(params, lr=0.1)
    >>> opt.step({"w": np.array([1.0, -1.0])})
    >>> params["w"]
    array([0.9, 2.1])
    """

    _slots = ("momentum_buffer", "scratch")

    def __init__(self, params: Mapping[str, np.ndarray], lr: float, *,
                 momentum: float = 0.0, weight_decay: float = 0.0) -> None:
        self.momentum = check_scalar(momentum, "momentum", low=0.0, high=math.inf,
                                     high_inclusive=False)
        self.weight_decay = check_scalar(weight_decay, "weight_decay", low=0.0,
                                         high=math.inf, high_inclusive=False)
        super().__init__(params, lr)

    def __repr__(self) -> str:
        return (f"SGD(lr={self.lr:g}, momentum={self.momentum:g}, "
                f"weight_decay={self.weight_decay:g})")

    def _update(self, p, grad, buf, scratch):
        g = grad
        if self.weight_decay:
            g = np.multiply(p, self.weight_decay, out=scratch)
            g += grad  # g + lambda * theta
        if self.momentum:
            if self.steps == 1:
                np.copyto(buf, g)  # b_1 = g_1
            else:
                buf *= self.momentum
                buf += g  # b_t = mu b_{t-1} + g_t
            g = buf
        np.multiply(g, self.lr, out=scratch)
        p -= scratch  # theta -= eta * b


class Adam(_Optimizer):
    r"""Adam: steps scaled by running estimates of the gradient's moments.

    Parameters
    ----------
    params : dict of str to ndarray
        The arrays to train (``model.params``), updated in place.
    lr : float, default 1e-3
        Learning rate :math:`\eta > 0` (settable attribute ``.lr``).
    betas : (float, float), default (0.9, 0.999)
        :math:`(\beta_1, \beta_2)`, each in :math:`[0, 1)`: decay rates of
        the first- and second-moment estimates.
    eps : float, default 1e-8
        :math:`\epsilon \ge 0`, added to the denominator.
    weight_decay : float, default 0.0
        :math:`\lambda \ge 0`, L2 penalty added to the gradient (as
        ``torch.optim.Adam``; not the decoupled AdamW).

    Notes
    -----
    As ``torch.optim.Adam`` (no AMSGrad), at step :math:`t = 1, 2, \dots`:

    .. math::

        g_t &\leftarrow g_t + \lambda \theta_{t-1} \\
        m_t &= \beta_1 m_{t-1} + (1 - \beta_1) g_t, \qquad
        v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        \theta_t &= \theta_{t-1} - \eta\, \frac{m_t / (1 - \beta_1^t)}
                   {\sqrt{v_t / (1 - \beta_2^t)} + \epsilon} ,

    with :math:`m_0 = v_0 = 0`; the divisions by :math:`1 - \beta^t` undo the
    bias of starting the averages at 0.  It is evaluated as
    :math:`\theta_t = \theta_{t-1} - \eta \frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t}
    \, m_t / (\sqrt{v_t} + \epsilon\sqrt{1-\beta_2^t})`, the same number up
    to rounding with one vector operation fewer.

    Examples
    --------
    >>> import scratchnet as sn
    >>> params = {"w": np.array([1.0, 2.0])}
    >>> opt = sn.Adam(params, lr=0.1)
    >>> opt.step({"w": np.array([3.0, -0.5])})   # first step: about lr * sign(g)
    >>> params["w"].round(6)
    array([0.9, 2.1])
    """

    _slots = ("exp_avg", "exp_avg_sq", "scratch", "scratch2")

    def __init__(self, params: Mapping[str, np.ndarray], lr: float = 1e-3, *,
                 betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"betas must be a pair (beta1, beta2); got {betas!r}")
        self.betas = tuple(check_scalar(b, f"betas[{i}]", low=0.0, high=1.0,
                                        high_inclusive=False)
                           for i, b in enumerate(betas))
        self.eps = check_scalar(eps, "eps", low=0.0, high=math.inf,
                                high_inclusive=False)
        self.weight_decay = check_scalar(weight_decay, "weight_decay", low=0.0,
                                         high=math.inf, high_inclusive=False)
        super().__init__(params, lr)

    def __repr__(self) -> str:
        return (f"Adam(lr={self.lr:g}, betas={self.betas}, eps={self.eps:g}, "
                f"weight_decay={self.weight_decay:g})")

    def _prepare(self) -> None:
        beta1, beta2 = self.betas
        root_correction2 = math.sqrt(1.0 - beta2 ** self.steps)
        self._step_size = self.lr * root_correction2 / (1.0 - beta1 ** self.steps)
        self._eps_hat = self.eps * root_correction2

    def _update(self, p, grad, m, v, scratch, scratch2):
        beta1, beta2 = self.betas
        g = grad
        if self.weight_decay:
            g = np.multiply(p, self.weight_decay, out=scratch)
            g += grad
        np.multiply(g, 1.0 - beta1, out=scratch2)
        m *= beta1
        m += scratch2  # m_t = beta1 m + (1 - beta1) g
        np.multiply(g, g, out=scratch2)
        scratch2 *= 1.0 - beta2
        v *= beta2
        v += scratch2  # v_t = beta2 v + (1 - beta2) g^2
        denom = np.sqrt(v, out=scratch2)
        denom += self._eps_hat
        step = np.divide(m, denom, out=scratch2)
        step *= self._step_size
        p -= step

