r"""Adam on the engine's flat vectors: the chapter's update, into scratch memory.

:class:`scratchnet.Adam` writes its update as its equations; on a flat
vector of :math:`P` parameters each line allocates a temporary of
:math:`P` entries (six per step).  :class:`Adam` here is the same class
with :meth:`Adam.update` doing the same operations, in the same order, into
one scratch vector kept between steps: the same numbers to the last bit
(``tests/test_fast.py`` pins it), and no allocation in a training step.
"""

from __future__ import annotations

import math
from typing import Any, Dict

import numpy as np

from .. import optim

__all__ = ["Adam"]


class Adam(optim.Adam):
    r""":class:`scratchnet.Adam`, its update written into reused memory.

    Parameters
    ----------
    params, lr, betas, eps, weight_decay
        As :class:`scratchnet.Adam`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> params = {"w": np.array([1.0, 2.0])}
    >>> opt = sn.fast.Adam(params, lr=0.1)
    >>> opt.step({"w": np.array([3.0, -0.5])})   # first step: about lr * sign(g)
    >>> params["w"].round(6)
    array([0.9, 2.1])
    """

    def __init__(self, params: Any, lr: float = 1e-3, **options: Any) -> None:
        super().__init__(params, lr, **options)
        self._scratch_vectors: Dict[tuple, Any] = {}

    def update(self, param: np.ndarray, grad: np.ndarray,
               state: Dict[str, np.ndarray]) -> None:
        """One Adam step on one array, as :meth:`scratchnet.optim.Adam.update`.

        Parameters
        ----------
        param, grad, state
            As in :meth:`scratchnet.optim.Optimizer.update`.

        Returns
        -------
        None

        Examples
        --------
        >>> import scratchnet as sn
        >>> w = np.array([1.0])
        >>> opt = sn.fast.Adam({"w": w}, lr=0.1)
        >>> opt.steps = 1
        >>> opt.update(w, np.array([5.0]), opt.state["w"])
        >>> w.round(6)
        array([0.9])
        """
        beta1, beta2 = self.betas
        t = self.step_number()
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        m, v = state["exp_avg"], state["exp_avg_sq"]
        tmp, c = self._prepared(param)
        m *= c[2]
        m += np.multiply(grad, c[0], out=tmp)  # m_t = beta1 m + (1 - beta1) g
        v *= c[3]
        np.multiply(grad, c[1], out=tmp)
        v += np.multiply(tmp, grad, out=tmp)  # v_t = beta2 v + (1 - beta2) g^2
        # the step's numbers as 0-d arrays of param's dtype: the values NumPy
        # would round the Python floats to, but a microsecond faster each
        c[4][()], c[5][()] = math.sqrt(1 - beta2**t), self.eps
        c[6][()] = self.lr / (1 - beta1**t)
        denom = np.sqrt(v, out=tmp)
        denom /= c[4]
        denom += c[5]
        step = np.divide(m, denom, out=tmp)
        step *= c[6]
        param -= step

    def _prepared(self, param: np.ndarray) -> tuple:
        """A scratch vector of ``param``'s shape and dtype, and the constants
        ``1 - beta1, 1 - beta2, beta1, beta2`` as 0-d arrays of its dtype (the
        same numbers NumPy would round a Python float to; a faster operand),
        with three more 0-d arrays for the numbers of each step; made once
        and reused from step to step."""
        key = (param.shape, param.dtype, self.betas)
        if key not in self._scratch_vectors:
            beta1, beta2 = self.betas
            constants = (1 - beta1, 1 - beta2, beta1, beta2, 0, 0, 0)  # and 3 per step
            self._scratch_vectors[key] = (np.empty(param.shape, param.dtype),
                                          tuple(np.asarray(v, param.dtype)
                                                for v in constants))
        return self._scratch_vectors[key]
