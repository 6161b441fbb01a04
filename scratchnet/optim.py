r"""Optimisers: stochastic gradient descent (with momentum) and Adam.

Training moves the parameters :math:`\theta` against the gradient of the
mini-batch loss, :math:`g_t = \nabla_\theta L_t(\theta_{t-1})`, an unbiased
estimate of the gradient of the population loss.  Plain SGD takes

.. math::

    \theta_t = \theta_{t-1} - \eta\, g_t ,

and because the population loss is minimised by the Bayes posterior (Gibbs'
inequality), plain SGD on the cross-entropy heads for the posterior.
Momentum averages successive gradients; Adam divides each coordinate by a
running estimate of the gradient's root mean square.  Both follow the
equations of ``torch.optim.SGD`` and ``torch.optim.Adam``, grouped as PyTorch
groups them, and agree with them to rounding, not bit for bit: after one step
1-2% of the entries differ, after 200 steps about half, each by at most about
2 units in the last place (ulp) of the largest entry, in float64 and float32.

An optimiser holds a dict of parameter arrays (all of a model's
``params``, or any subset) and updates them **in place**, one array at a
time, from a dict of gradients with (at least) the same keys.  Each rule is
one method, :meth:`Optimizer.update`, written as its equations.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Dict, Mapping, Tuple

import numpy as np

from ._validation import (
    check_bool,
    check_finite_gradient,
    check_parameter,
    check_scalar,
    check_update,
    describe,
)

__all__ = ["SGD", "Adam", "Optimizer"]


def _positive(value: Any, name: str, *, zero: bool = True,
              below_one: bool = False) -> float:
    """A finite number >= 0 (> 0 if not ``zero``; < 1 if ``below_one``)."""
    return check_scalar(value, name, low=0.0, low_inclusive=zero,
                        high=1.0 if below_one else math.inf, high_inclusive=False)


class Optimizer:
    r"""The base of every optimiser: parameters, per-parameter state, ``step``.

    Parameters
    ----------
    params : dict of str to ndarray
        The floating arrays to train, updated in place (``model.params`` or
        a subset of it).
    lr : float
        The learning rate :math:`\eta \ge 0`, finite (attribute ``.lr``,
        settable between steps by a schedule; 0 leaves the parameters as
        they are, as in PyTorch).

    Attributes
    ----------
    state : dict of str to dict of ndarray
        Per parameter name, the rule's running quantities (e.g. Adam's
        moments), created by :meth:`init_state`.
    steps : int
        Updates made so far (``t`` of the formulas after ``step``).

    Raises
    ------
    FloatingPointError
        From :meth:`step`, before any array changes, when a gradient holds
        NaN or an infinity; the message names the parameter.

    Notes
    -----
    **Adding an update rule.**  Subclass, name the state arrays in
    ``init_state(param) -> dict`` and write ``update(param, grad, state)``,
    which changes ``param`` in place, from its equations::

        class SignSGD(sn.Optimizer):
            def update(self, param, grad, state):
                param -= self.lr * np.sign(grad)

    ``step`` calls ``update`` once per parameter array.  Rules that are
    elementwise (all of these) give the same numbers whether the arrays are
    updated one by one or all at once as one flat vector: the fast path's
    models (:mod:`scratchnet.fast`) hold their parameters and gradients in
    containers with ``.flat`` (one vector), ``.layout`` (the names and
    shapes) and ``.unflatten(vector)`` (per-name views of a vector), and
    ``step`` then calls ``update`` once, on the whole vectors.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> params = {"w": np.array([1.0, 2.0])}
    >>> opt = sn.SGD(params, lr=0.5)
    >>> opt.step({"w": np.array([1.0, 1.0])})
    >>> params["w"], opt.steps
    (array([0.5, 1.5]), 1)
    """

    def __init__(self, params: Mapping[str, np.ndarray], lr: float) -> None:
        if not isinstance(params, Mapping) or not params:
            raise TypeError("params must be a non-empty dict of name -> ndarray "
                            f"(like model.params); got {type(params).__name__}")
        for name, p in params.items():
            if not isinstance(name, str):
                raise TypeError("params must map names (strings) to arrays; got a "
                                f"key {describe(name)}")
            check_parameter(p, f"params[{name!r}]")
            if not p.flags.writeable:
                raise ValueError(f"params[{name!r}] must be writeable (it is updated "
                                 "in place)")
        self.params, self.lr, self.steps = params, lr, 0
        self.state: Dict[str, Dict[str, np.ndarray]] = {
            name: self.init_state(p) for name, p in params.items()}
        # The fast path (scratchnet.fast) keeps every parameter in one vector,
        # params.flat; the state is then whole vectors too, seen per name.
        self._flat_state = None
        if getattr(params, "flat", None) is not None:
            self._flat_state = self.init_state(params.flat)
            views = {k: params.unflatten(v) for k, v in self._flat_state.items()}
            self.state = {name: {k: views[k][name] for k in views} for name in params}

    @property
    def lr(self) -> float:
        """The learning rate :math:`\\eta \\ge 0`."""
        return self._lr

    @lr.setter
    def lr(self, value: float) -> None:
        self._lr = _positive(value, "lr")

    def init_state(self, param: np.ndarray) -> Dict[str, np.ndarray]:
        """The running quantities of one parameter array (none for plain SGD).

        Parameters
        ----------
        param : ndarray

        Returns
        -------
        dict of str to ndarray

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> sorted(sn.Adam({"w": np.zeros(2)}).init_state(np.zeros(2)))
        ['exp_avg', 'exp_avg_sq']
        """
        check_parameter(param)
        return {}

    def update(self, param: np.ndarray, grad: np.ndarray,
               state: Dict[str, np.ndarray]) -> None:
        """Change ``param`` in place by the rule's equations (subclasses define it).

        Parameters
        ----------
        param : ndarray
            Updated in place.
        grad : ndarray, shape of ``param``
        state : dict of str to ndarray
            This parameter's running quantities, updated in place.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> w = np.array([1.0])
        >>> sn.SGD({"w": w}, lr=0.1).update(w, np.array([2.0]), {})
        >>> w
        array([0.8])
        """
        raise NotImplementedError(f"{type(self).__name__} must define update")

    def step(self, grads: Mapping[str, np.ndarray], *, check_finite: bool = True
             ) -> None:
        """One update of every parameter from its gradient.

        Parameters
        ----------
        grads : dict of str to ndarray
            At least the keys of ``params``, each of its parameter's shape
            (e.g. from ``model.loss_and_grads``).
        check_finite : bool, default True
            Raise FloatingPointError, before any array changes, if a gradient
            is not finite.  A training loop that has just checked them (the fast
            path's, :func:`scratchnet.fast.train`) passes False.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> params = {"w": np.array([1.0, 2.0])}
        >>> sn.SGD(params, lr=0.1).step({"w": np.array([1.0, -1.0])})
        >>> params["w"]
        array([0.9, 2.1])
        """
        check_finite = check_bool(check_finite, "check_finite")
        if self._flat_state is not None and getattr(grads, "layout", None) is getattr(
                self.params, "layout", False):
            if check_finite and not np.isfinite(grads.flat).all():  # the whole vector
                for name in self.params:
                    check_finite_gradient(grads[name], name)
            self.steps += 1  # the same rule, once on the fast path's whole vectors
            self.update(self.params.flat, grads.flat, self._flat_state)
            return
        pairs = [(name, self._grad(grads, name)) for name in self.params]
        if check_finite:  # all checked before any array changes
            for name, grad in pairs:
                check_finite_gradient(grad, name)
        self.steps += 1
        for name, grad in pairs:
            self.update(self.params[name], grad, self.state[name])

    def _grad(self, grads: Mapping[str, Any], name: str) -> np.ndarray:
        """``grads[name]``, checked against ``params[name]``."""
        if not isinstance(grads, Mapping):
            raise TypeError("grads must be a dict like params; got "
                            f"{type(grads).__name__}")
        if name not in grads:
            raise ValueError("grads must have the keys of params "
                             f"{sorted(self.params)}; missing {name!r}")
        g, p = grads[name], self.params[name]
        if not isinstance(g, np.ndarray) or g.dtype.kind not in "fiu":
            raise TypeError(f"grads[{name!r}] must be a real ndarray; got "
                            f"{type(g).__name__}")
        if g.shape != p.shape:
            raise ValueError(f"grads[{name!r}] must have the shape of params[{name!r}] "
                             f"{p.shape}; got {g.shape}")
        return g


class SGD(Optimizer):
    r"""Stochastic gradient descent, optionally with momentum and weight decay.

    Parameters
    ----------
    params : dict of str to ndarray
        The arrays to train, updated in place.
    lr : float
        Learning rate :math:`\eta \ge 0`, finite.
    momentum : float, default 0.0
        :math:`\mu \ge 0`; 0 is plain SGD.
    weight_decay : float, default 0.0
        :math:`\lambda \ge 0`, an L2 penalty :math:`\frac\lambda2 \|\theta\|^2`.

    Notes
    -----
    As ``torch.optim.SGD`` (no dampening, no Nesterov):

    .. math::

        g_t &\leftarrow g_t + \lambda \theta_{t-1} \\
        b_t &= \mu b_{t-1} + g_t \quad (b_1 = g_1) \\
        \theta_t &= \theta_{t-1} - \eta\, b_t \quad (\theta_t = \theta_{t-1} - \eta g_t
        \text{ if } \mu = 0) .

    The defaults are plain SGD with no penalty, so training heads for the
    minimiser of the cross-entropy alone, the Bayes posterior.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> params = {"w": np.array([1.0, 2.0])}
    >>> opt = sn.SGD(params, lr=0.1)
    >>> opt.step({"w": np.array([1.0, -1.0])})
    >>> params["w"]
    array([0.9, 2.1])
    """

    def __init__(self, params: Mapping[str, np.ndarray], lr: float, *,
                 momentum: float = 0.0, weight_decay: float = 0.0) -> None:
        self.momentum = _positive(momentum, "momentum")
        self.weight_decay = _positive(weight_decay, "weight_decay")
        super().__init__(params, lr)

    def __repr__(self) -> str:
        return (f"SGD(lr={self.lr:g}, momentum={self.momentum:g}, "
                f"weight_decay={self.weight_decay:g})")

    def init_state(self, param: np.ndarray) -> Dict[str, np.ndarray]:
        """The momentum buffer :math:`b`, if there is momentum.

        Parameters
        ----------
        param : ndarray

        Returns
        -------
        dict of str to ndarray
            ``{"momentum_buffer": zeros}`` or ``{}``.

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> sn.SGD({"w": np.zeros(2)}, lr=1.0, momentum=0.9).init_state(np.zeros(2))
        {'momentum_buffer': array([0., 0.])}
        """
        check_parameter(param)
        return {"momentum_buffer": np.zeros_like(param)} if self.momentum else {}

    def update(self, param: np.ndarray, grad: np.ndarray,
               state: Dict[str, np.ndarray]) -> None:
        """One SGD step on one array (equations in the class Notes).

        Parameters
        ----------
        param, grad, state
            As in :meth:`Optimizer.update`.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> w = np.array([1.0])
        >>> sn.SGD({"w": w}, lr=0.5).update(w, np.array([1.0]), {})
        >>> w
        array([0.5])
        """
        check_update(param, grad, state)
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        if self.momentum:
            b = state["momentum_buffer"]
            if self.steps == 1:
                b[...] = grad  # b_1 = g_1
            else:
                b *= self.momentum
                b += grad  # b_t = mu b_{t-1} + g_t
            grad = b
        param -= self.lr * grad


class Adam(Optimizer):
    r"""Adam: steps scaled by running estimates of the gradient's moments.

    Parameters
    ----------
    params : dict of str to ndarray
        The arrays to train, updated in place.
    lr : float, default 1e-3
        Learning rate :math:`\eta \ge 0`, finite.
    betas : (float, float), default (0.9, 0.999)
        :math:`(\beta_1, \beta_2)`, each in :math:`[0, 1)`.
    eps : float, default 1e-8
        :math:`\epsilon > 0`, finite, added to the denominator (0 would
        divide 0 by 0 wherever a gradient stays 0).
    weight_decay : float, default 0.0
        :math:`\lambda \ge 0`, L2 penalty added to the gradient (as
        ``torch.optim.Adam``; not the decoupled AdamW).

    Notes
    -----
    At step :math:`t = 1, 2, \dots`, with :math:`m_0 = v_0 = 0`:

    .. math::

        g_t &\leftarrow g_t + \lambda \theta_{t-1} \\
        m_t &= \beta_1 m_{t-1} + (1 - \beta_1) g_t, \qquad
        v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        \theta_t &= \theta_{t-1} - \frac{\eta}{1 - \beta_1^t}\,
                   \frac{m_t}{\sqrt{v_t} / \sqrt{1 - \beta_2^t} + \epsilon} ,

    the bias-corrected :math:`\hat m_t = m_t / (1 - \beta_1^t)` over
    :math:`\sqrt{\hat v_t} + \epsilon`, grouped as ``torch.optim.Adam``
    groups it (the two agree to rounding: see the module docstring).

    :math:`t` is ``steps``, counted by :meth:`step` before it calls
    :meth:`update` (see :meth:`step_number`).

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> params = {"w": np.array([1.0, 2.0])}
    >>> opt = sn.Adam(params, lr=0.1)
    >>> opt.step({"w": np.array([3.0, -0.5])})   # first step: about lr * sign(g)
    >>> params["w"].round(6)
    array([0.9, 2.1])
    """

    def __init__(self, params: Mapping[str, np.ndarray], lr: float = 1e-3, *,
                 betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"betas must be a pair (beta1, beta2); got {betas!r}")
        self.betas = tuple(_positive(b, f"betas[{i}]", below_one=True)
                           for i, b in enumerate(betas))
        self.eps = _positive(eps, "eps", zero=False)
        self.weight_decay = _positive(weight_decay, "weight_decay")
        super().__init__(params, lr)

    def __repr__(self) -> str:
        return (f"Adam(lr={self.lr:g}, betas={self.betas}, eps={self.eps:g}, "
                f"weight_decay={self.weight_decay:g})")

    def step_number(self) -> int:
        r"""The :math:`t` of the current update: ``steps``, checked to be >= 1.

        Returns
        -------
        int

        Raises
        ------
        RuntimeError
            If no step has been counted (:meth:`update` called on a new
            optimiser): the bias corrections :math:`1 - \beta^t` are 0 at
            :math:`t = 0`.  :meth:`step` counts the step first, as PyTorch does.

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> opt = sn.Adam({"w": np.zeros(1)})
        >>> opt.step({"w": np.ones(1)})
        >>> opt.step_number()
        1
        """
        t = self.steps
        if isinstance(t, bool) or not isinstance(t, numbers.Integral) or t < 1:
            raise RuntimeError(
                f"{type(self).__name__}.update needs the step count t = steps >= 1 "
                f"(its bias corrections 1 - beta**t divide, and are 0 at t = 0); got "
                f"steps={t!r}: call step(grads), which counts the step, or set "
                "steps before calling update directly")
        return int(t)

    def init_state(self, param: np.ndarray) -> Dict[str, np.ndarray]:
        """The moment estimates :math:`m` and :math:`v`, zero to start.

        Parameters
        ----------
        param : ndarray

        Returns
        -------
        dict of str to ndarray
            ``exp_avg`` (:math:`m`) and ``exp_avg_sq`` (:math:`v`).

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> sn.Adam({"w": np.zeros(1)}).init_state(np.zeros(1))["exp_avg"]
        array([0.])
        """
        check_parameter(param)
        return {"exp_avg": np.zeros_like(param), "exp_avg_sq": np.zeros_like(param)}

    def update(self, param: np.ndarray, grad: np.ndarray,
               state: Dict[str, np.ndarray]) -> None:
        """One Adam step on one array (equations in the class Notes).

        Parameters
        ----------
        param, grad, state
            As in :meth:`Optimizer.update`.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> w = np.array([1.0])
        >>> opt = sn.Adam({"w": w}, lr=0.1)
        >>> opt.steps = 1
        >>> opt.update(w, np.array([5.0]), opt.state["w"])
        >>> w.round(6)
        array([0.9])
        """
        check_update(param, grad, state)
        beta1, beta2 = self.betas
        t = self.step_number()
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m *= beta1
        m += (1 - beta1) * grad  # m_t = beta1 m + (1 - beta1) g
        v *= beta2
        v += (1 - beta2) * grad * grad  # v_t = beta2 v + (1 - beta2) g^2
        denom = np.sqrt(v) / math.sqrt(1 - beta2**t) + self.eps
        param -= self.lr / (1 - beta1**t) * (m / denom)
