"""The hand-out's base classes inside the sandbox, in plain NumPy: scaffolding only.

A hand-out's ``mlp.py`` and ``optim.py`` write their exercise methods in
subclasses of the chapter's classes (``class TwoLayerMLP(ChapterTwoLayerMLP)``).
The sandbox holds no scratchnet, so the answering shim
(:mod:`scratchnet.exercises.shim`) serves this file as ``scratchnet.mlp`` and
``scratchnet.optim`` (and ``scratchnet.exercises``, whose ``assert_passes`` a
notebook's modules import, as a function that does nothing): the
constructors, ``params``, ``loss_and_grads`` and ``step``, the parts no
exercise asks for.  The exercise methods
(``forward``, ``backward``, ``update``) are not here: the shim attaches the
reference of those the graded exercise depends on (carry-forward), never the
graded one's own.  Like the shim, this file imports only NumPy.

The parameters a constructor draws are placeholders: the grader writes the
chapter's own initial values into every network it checks.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Tuple

import numpy as np

__all__ = ["SGD", "Adam", "Optimizer", "TwoLayerMLP", "assert_examples",
           "assert_passes"]

#: The carried reference functions (``cross_entropy``, ...), filled by the shim.
REFERENCE: Dict[str, Any] = {}


def _reference(name: str) -> Any:
    if name not in REFERENCE:
        raise NameError(f"{name} is not given for this exercise")
    return REFERENCE[name]


def assert_passes(*args: Any, **kwargs: Any) -> None:
    """A notebook's check cell, imported with its module: nothing, in the sandbox.

    The grader runs the checks, in its own process.

    Parameters
    ----------
    *args, **kwargs
        Whatever the cell passes.

    Returns
    -------
    None

    Examples
    --------
    >>> assert_passes("softmax", None)
    """


def assert_examples(*args: Any, **kwargs: Any) -> None:
    """As :func:`assert_passes`: nothing, in the sandbox.

    Parameters
    ----------
    *args, **kwargs
        Whatever the cell passes.

    Returns
    -------
    None

    Examples
    --------
    >>> assert_examples(None)
    """


class TwoLayerMLP:
    """A two-layer network's scaffolding: sizes, activation, dtype, ``params``.

    Parameters
    ----------
    in_features, hidden_features, out_features : int
    activation : {"relu", "tanh"}
    rng : int or Generator, optional
    dtype : dtype, default float64

    Examples
    --------
    >>> sorted(TwoLayerMLP(1, 4, 2, rng=0).params)
    ['W1', 'W2', 'b1', 'b2']
    """

    def __init__(self, in_features: int, hidden_features: int, out_features: int, *,
                 activation: str = "relu", rng: Any = None, dtype: Any = np.float64,
                 **_: Any) -> None:
        self.sizes = (int(in_features), int(hidden_features), int(out_features))
        self.in_features, self.hidden_features, self.out_features = self.sizes
        self.activation, self.dtype = activation, np.dtype(dtype)
        gen = np.random.default_rng(rng)
        self.params = {
            "W1": gen.standard_normal(self.sizes[:2]).astype(self.dtype),
            "b1": np.zeros(self.sizes[1], dtype=self.dtype),
            "W2": gen.standard_normal(self.sizes[1:]).astype(self.dtype),
            "b2": np.zeros(self.sizes[2], dtype=self.dtype)}
        self._cache: Any = None
        self._logits_shape: Any = None

    def loss_and_grads(self, x: Any, targets: Any, **_: Any
                       ) -> Tuple[float, Dict[str, np.ndarray]]:
        """The mean cross-entropy of a batch and its gradients: forward, loss, backward.

        ``forward`` and ``backward`` are the subclass's (or carried references);
        the loss and its gradient are the carried ``cross_entropy`` and
        ``cross_entropy_grad``.

        Parameters
        ----------
        x : ndarray, shape (N, D) or (N,)
        targets : ndarray of int, shape (N,)

        Returns
        -------
        (float, dict)

        Examples
        --------
        >>> import numpy as np
        >>> TwoLayerMLP(1, 2, 2).loss_and_grads(np.zeros(1), np.zeros(1, int))
        Traceback (most recent call last):
        ...
        AttributeError: 'TwoLayerMLP' object has no attribute 'forward'
        """
        logits = self.forward(x)
        value = _reference("cross_entropy")(logits, targets)
        return float(value), self.backward(_reference("cross_entropy_grad")(
            logits, targets))


class Optimizer:
    """An optimiser's scaffolding: ``params``, ``lr``, ``state``, ``step``.

    Parameters
    ----------
    params : dict of str to ndarray
        Updated in place by :meth:`step`.
    lr : float

    Examples
    --------
    >>> import numpy as np
    >>> Optimizer({"w": np.zeros(2)}, lr=0.1).state
    {'w': {}}
    """

    def __init__(self, params: Mapping[str, np.ndarray], lr: float) -> None:
        self.params, self.lr, self.steps = params, lr, 0
        self.state = {name: self.init_state(p) for name, p in params.items()}

    def init_state(self, param: np.ndarray) -> Dict[str, np.ndarray]:
        """This parameter's running quantities (none).

        Parameters
        ----------
        param : ndarray

        Returns
        -------
        dict

        Examples
        --------
        >>> import numpy as np
        >>> Optimizer({"w": np.zeros(1)}, lr=1.0).init_state(np.zeros(1))
        {}
        """
        return {}

    def update(self, param: np.ndarray, grad: np.ndarray,
               state: Dict[str, np.ndarray]) -> None:
        """Not given: the exercise, or a carried reference.

        Parameters
        ----------
        param, grad : ndarray
        state : dict

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> Optimizer({"w": np.zeros(1)}, lr=1.0).update(np.zeros(1), np.ones(1), {})
        Traceback (most recent call last):
        ...
        NotImplementedError: Optimizer.update is not given here
        """
        raise NotImplementedError(f"{type(self).__name__}.update is not given here")

    def step(self, grads: Mapping[str, np.ndarray], **_: Any) -> None:
        """One update of every parameter with its gradient.

        Parameters
        ----------
        grads : dict of str to ndarray

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> opt = Optimizer({"w": np.zeros(1)}, lr=1.0)
        >>> opt.update = lambda param, grad, state: None
        >>> opt.step({"w": np.ones(1)}); opt.steps
        1
        """
        self.steps += 1
        for name in self.params:
            self.update(self.params[name], np.asarray(grads[name]), self.state[name])


class SGD(Optimizer):
    """SGD's scaffolding: ``lr``, ``momentum``, ``weight_decay``.

    Parameters
    ----------
    params : dict of str to ndarray
    lr : float
    momentum, weight_decay : float, default 0

    Examples
    --------
    >>> import numpy as np
    >>> SGD({"w": np.zeros(1)}, lr=0.5).lr
    0.5
    """

    def __init__(self, params: Mapping[str, np.ndarray], lr: float, *,
                 momentum: float = 0.0, weight_decay: float = 0.0) -> None:
        self.momentum, self.weight_decay = momentum, weight_decay
        super().__init__(params, lr)

    def init_state(self, param: np.ndarray) -> Dict[str, np.ndarray]:
        """The momentum buffer, zeros like ``param``, if there is momentum.

        Parameters
        ----------
        param : ndarray

        Returns
        -------
        dict

        Examples
        --------
        >>> import numpy as np
        >>> SGD({"w": np.zeros(1)}, lr=1.0, momentum=0.9).state
        {'w': {'momentum_buffer': array([0.])}}
        """
        return {"momentum_buffer": np.zeros_like(param)} if self.momentum else {}


class Adam(Optimizer):
    """Adam's scaffolding: its options and its two moment buffers per parameter.

    Parameters
    ----------
    params : dict of str to ndarray
    lr : float, default 1e-3
    betas : (float, float), default (0.9, 0.999)
    eps : float, default 1e-8
    weight_decay : float, default 0

    Examples
    --------
    >>> import numpy as np
    >>> sorted(Adam({"w": np.zeros(1)}).state["w"])
    ['exp_avg', 'exp_avg_sq']
    """

    def __init__(self, params: Mapping[str, np.ndarray], lr: float = 1e-3, *,
                 betas: Any = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        self.betas, self.eps, self.weight_decay = tuple(betas), eps, weight_decay
        super().__init__(params, lr)

    def init_state(self, param: np.ndarray) -> Dict[str, np.ndarray]:
        """The moment estimates :math:`m` and :math:`v`, zeros like ``param``.

        Parameters
        ----------
        param : ndarray

        Returns
        -------
        dict

        Examples
        --------
        >>> import numpy as np
        >>> Adam({"w": np.zeros(2)}).init_state(np.zeros(2))["exp_avg"]
        array([0., 0.])
        """
        return {"exp_avg": np.zeros_like(param), "exp_avg_sq": np.zeros_like(param)}

    def step_number(self) -> int:
        """The :math:`t` of the current update (``steps``, counted by ``step``).

        Returns
        -------
        int

        Examples
        --------
        >>> import numpy as np
        >>> opt = Adam({"w": np.zeros(1)})
        >>> opt.steps = 3
        >>> opt.step_number()
        3
        """
        return int(self.steps)
