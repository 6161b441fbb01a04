r"""Reference solutions of the model exercises: Bayes' rule, layers, network, training.

As in :mod:`scratchnet.exercises.reference_scores`: each function has the
exercise's signature and a docstring for the student (only its arguments,
only what is graded, examples that call itself); its body is the chapter's,
checks taken out, copied by ``python -m scratchnet.exercises.derive``.  A
method exercise is a method of a subclass of the chapter's class, as the
hand-out writes it: ``SGD.update`` is written in an ``SGD`` that inherits
everything else from ``scratchnet.optim``.  ``TwoLayerMLP.forward`` and
``backward`` alone are written here (their chapter bodies read
``mlp.ACTIVATIONS``, a table that would give the sandbox the backward passes
an exercise must not be given); ``tests/test_key_and_chapters.py`` pins them
to the chapter's by what they compute.  (Formerly ``key_models``.)
"""

from __future__ import annotations

import math
from typing import Dict, Tuple

import numpy as np

from .. import mlp, optim
from .reference_scores import sigmoid

__all__ = [
    "POINTERS",
    "SGD",
    "Adam",
    "TwoLayerMLP",
    "linear_backward",
    "linear_forward",
    "relu_backward",
    "relu_forward",
    "tanh_backward",
    "tanh_forward",
    "train_step",
    "two_gaussian_posterior",
]

POINTERS = {
    "two_gaussian_posterior": "P(c1 | x) by Bayes' rule, finite for any finite x",
    "linear_backward": "the gradients of the loss with respect to x, W and b, "
                       "from dout and the cache",
    "relu_backward": "the gradient with respect to the ReLU's input",
    "tanh_backward": "the gradient with respect to tanh's input, from the cached "
                     "output",
    "TwoLayerMLP.forward": "the logits of the chain linear, activation, linear, "
                           "keeping what backward needs",
    "TwoLayerMLP.backward": "the gradients of W1, b1, W2, b2: the forward chain in "
                            "reverse",
    "SGD.update": "one step of gradient descent on param, in place",
    "Adam.update": "one Adam step on param, its moment estimates in state, in place",
    "train_step": "one step of training: forward, loss, backward, update",
}


def two_gaussian_posterior(x: np.ndarray, mu1: float, sigma1: float, mu2: float,
                           sigma2: float, prior1: float = 0.5) -> np.ndarray:
    r"""Bayes' rule for two 1-D Gaussian classes: the posterior :math:`P(c_1 \mid x)`.

    Parameters
    ----------
    x : ndarray, any shape
        Finite inputs.
    mu1, sigma1 : float
        Mean and (positive) standard deviation of class :math:`c_1`.
    mu2, sigma2 : float
        The same for class :math:`c_2`.
    prior1 : float, default 0.5
        :math:`P(c_1)` in (0, 1); :math:`P(c_2) = 1 - P(c_1)`.

    Returns
    -------
    ndarray, shape of ``x``
        :math:`P(c_1 \mid x)` in [0, 1], finite for every finite ``x`` (also
        far in the tails, x = -40 or 40, where both densities underflow).

    Notes
    -----
    With :math:`\log N(x; \mu, \sigma) = -\tfrac12 ((x - \mu)/\sigma)^2 -
    \log \sigma - \tfrac12 \log 2\pi`, Bayes' rule is a sigmoid of the log-odds:

    .. math::

        P(c_1 \mid x) = \sigma(a), \qquad
        a = \log \frac{P(c_1)\, N(x; \mu_1, \sigma_1)}{P(c_2)\, N(x; \mu_2, \sigma_2)} .

    Taken in log space, no density underflows to 0/0.

    Examples
    --------
    >>> x = np.array([0.0, 1.5, 3.0])
    >>> two_gaussian_posterior(x, 0.0, 1.0, 3.0, 1.0).round(6)
    array([0.989013, 0.5     , 0.010987])
    >>> two_gaussian_posterior(np.array([-40.0, 40.0]), 0.0, 1.0, 3.0, 2.0).round(6)
    array([0., 0.])
    >>> two_gaussian_posterior(np.array([-2.0, 0.0, 2.0]), 0.0, 2.0, 1.0, 1.0,
    ...                        prior1=0.3).round(6)       # unequal sigmas and priors
    array([0.921257, 0.261064, 0.176471])
    """
    x = np.asarray(x)
    # z1 - z2 and z1 + z2 (z_i = (x - mu_i) / sigma_i) as lines in x: with equal
    # sigmas z1 - z2 is the exact constant, however large x is
    with np.errstate(over="ignore"):  # |r| past 1.8e308 is inf: P is 0 or 1 there
        diff = (1 / sigma1 - 1 / sigma2) * x + (mu2 / sigma2 - mu1 / sigma1)
        total = (1 / sigma1 + 1 / sigma2) * x - (mu1 / sigma1 + mu2 / sigma2)
        r = 0.5 * diff * total  # (z1^2 - z2^2) / 2
    r += math.log(sigma1) - math.log(sigma2) + math.log((1 - prior1) / prior1)
    return sigmoid(-r)


def linear_forward(x: np.ndarray, W: np.ndarray,
                   b: np.ndarray) -> Tuple[np.ndarray, tuple]:
    r"""Affine layer :math:`\text{out} = x W + b`.

    Parameters
    ----------
    x : ndarray, shape (N, in)
        A batch of inputs, one per row.
    W : ndarray, shape (in, out)
        Weights.
    b : ndarray, shape (out,)
        Biases, added to every row.

    Returns
    -------
    out : ndarray, shape (N, out)
    cache : tuple
        ``(x, W)``, what :func:`linear_backward` needs.

    Examples
    --------
    >>> out, cache = linear_forward(np.array([[1.0, 2.0]]), np.eye(2),
    ...                             np.array([0.5, -0.5]))
    >>> out
    array([[1.5, 1.5]])
    """
    x = np.asarray(x)
    W = np.asarray(W)
    b = np.asarray(b)
    out = x @ W + b
    return out, (x, W)


def linear_backward(dout: np.ndarray,
                    cache: tuple) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Gradients of the affine layer :math:`\text{out} = x W + b`.

    Parameters
    ----------
    dout : ndarray, shape (N, out)
        :math:`\partial L / \partial \text{out}`, the upstream gradient.
    cache : tuple
        ``(x, W)`` from :func:`linear_forward`.

    Returns
    -------
    dx : ndarray, shape (N, in)
        :math:`\partial L / \partial x`.
    dW : ndarray, shape (in, out)
        :math:`\partial L / \partial W`.
    db : ndarray, shape (out,)
        :math:`\partial L / \partial b`.

    Notes
    -----
    The chain rule, with :math:`\text{out}_{nk} = \sum_i x_{ni} W_{ik} + b_k`:
    the same :math:`b` is added to every row.  The gradients agree with
    central finite differences, keep float32, and neither ``dout`` nor the
    cache is changed.

    Examples
    --------
    >>> out, cache = linear_forward(np.array([[1.0, 2.0]]), np.array([[1.0], [3.0]]),
    ...                             np.array([0.0]))
    >>> dx, dW, db = linear_backward(np.array([[1.0]]), cache)
    >>> dx, dW.ravel(), db
    (array([[1., 3.]]), array([1., 2.]), array([1.]))
    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])                  # a batch of two rows
    >>> _, cache = linear_forward(x, np.array([[1.0], [3.0]]), np.array([0.0]))
    >>> dx, dW, db = linear_backward(np.array([[1.0], [2.0]]), cache)
    >>> dW
    array([[ 7.],
           [10.]])
    >>> db
    array([3.])
    """
    dout = np.asarray(dout)
    x, W = cache
    dx = dout @ W.T
    dW = x.T @ dout
    db = dout.sum(axis=0)
    return dx, dW, db


def relu_forward(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    r"""Rectified linear unit :math:`\max(x, 0)`, elementwise.

    Parameters
    ----------
    x : ndarray, any shape

    Returns
    -------
    out : ndarray, shape of ``x``
    cache : ndarray
        ``x``, whose sign the backward pass needs.

    Examples
    --------
    >>> out, cache = relu_forward(np.array([-1.0, 0.0, 2.0]))
    >>> out
    array([0., 0., 2.])
    """
    x = np.asarray(x)
    return np.asarray(np.maximum(x, 0.0)), x  # asarray: a 0-d x gives a 0-d array


def relu_backward(dout: np.ndarray, cache: np.ndarray) -> np.ndarray:
    r"""Gradient of the ReLU: ``dout`` where the input was positive, else 0.

    Parameters
    ----------
    dout : ndarray, shape of the layer's output
        :math:`\partial L / \partial \text{out}`.
    cache : ndarray
        The input saved by :func:`relu_forward`.

    Returns
    -------
    dx : ndarray, shape and dtype of ``dout``
        :math:`\text{dout} \cdot \mathbf{1}[x > 0]`.

    Notes
    -----
    At the kink :math:`x = 0` the derivative is taken as 0.  Neither input is
    changed.

    Examples
    --------
    >>> out, cache = relu_forward(np.array([-1.0, 0.0, 2.0]))
    >>> relu_backward(np.array([5.0, 5.0, 5.0]), cache)
    array([0., 0., 5.])
    """
    dout = np.asarray(dout)
    return np.where(cache > 0, dout, 0.0).astype(dout.dtype, copy=False)


def tanh_forward(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    r"""The tanh activation, elementwise; the output is its own cache.

    Parameters
    ----------
    x : ndarray, any shape

    Returns
    -------
    out : ndarray, shape of ``x``
    cache : ndarray
        ``out``: the derivative needs only the output.

    Examples
    --------
    >>> tanh_forward(np.array([0.0, 100.0]))[0]
    array([0., 1.])
    """
    out = np.asarray(np.tanh(np.asarray(x)))
    return out, out


def tanh_backward(dout: np.ndarray, cache: np.ndarray) -> np.ndarray:
    r"""Gradient of tanh from its cached output :math:`y = \tanh x`.

    Parameters
    ----------
    dout : ndarray, shape of the layer's output
        :math:`\partial L / \partial \text{out}`.
    cache : ndarray
        The output of :func:`tanh_forward`.

    Returns
    -------
    dx : ndarray, shape and dtype of ``dout``

    Notes
    -----
    .. math::

        \frac{d \tanh x}{d x} = 1 - \tanh^2 x = 1 - y^2 ,

    from the cache: no second tanh.  Neither input is changed.

    Examples
    --------
    >>> out, cache = tanh_forward(np.array([0.0, 100.0]))
    >>> tanh_backward(np.array([2.0, 2.0]), cache)
    array([2., 0.])
    """
    dout = np.asarray(dout)
    return np.asarray(dout * (1.0 - cache * cache))  # 0-d stays an array


class TwoLayerMLP(mlp.TwoLayerMLP):
    """The chapter's two-layer network, its forward and backward written out.

    Parameters
    ----------
    *args, **kwargs
        As the chapter's class.

    Examples
    --------
    >>> TwoLayerMLP(1, 4, 2, rng=0).forward(np.zeros(3)).shape
    (3, 2)
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        r"""Logits of a batch: ``linear -> activation -> linear``.

        Parameters
        ----------
        x : ndarray, shape (N, D), or (N,) when D = 1

        Returns
        -------
        logits : ndarray, shape (N, M), the network's dtype

        Notes
        -----
        :math:`z = x W_1 + b_1`, :math:`h = \phi(z)` (``self.activation``:
        ``"relu"`` or ``"tanh"``), :math:`f = h W_2 + b_2`, the weights in
        ``self.params``.  The three caches are kept in ``self._cache``, and
        the logits' shape in ``self._logits_shape``, for :meth:`backward`
        (which checks ``dlogits`` against it).

        Examples
        --------
        >>> TwoLayerMLP(2, 3, 4, rng=0).forward(np.zeros((5, 2))).shape
        (5, 4)
        """
        activations = {"relu": relu_forward, "tanh": tanh_forward}
        P = self.params
        x = np.asarray(x, dtype=self.dtype).reshape(len(x), -1)  # (N,): one column
        z, cache_1 = linear_forward(x, P["W1"], P["b1"])
        h, cache_h = activations[self.activation](z)
        logits, cache_2 = linear_forward(h, P["W2"], P["b2"])
        self._cache, self._logits_shape = (cache_1, cache_h, cache_2), logits.shape
        return logits

    def backward(self, dlogits: np.ndarray) -> Dict[str, np.ndarray]:
        r"""Gradients of the parameters by backprop: the forward chain in reverse.

        Parameters
        ----------
        dlogits : ndarray, shape (N, M)
            :math:`\partial L / \partial f` for the last :meth:`forward`.

        Returns
        -------
        grads : dict of str to ndarray
            ``W1, b1, W2, b2``, each the shape of its parameter.

        Notes
        -----
        :math:`\delta_h = \delta_f W_2^\top`, :math:`\delta_z = \delta_h \odot
        \phi'(z)`, then the weight gradients of each linear layer.  They agree
        with central finite differences, and training with them reaches the
        posterior of a task.

        Examples
        --------
        >>> model = TwoLayerMLP(2, 3, 4, rng=0)
        >>> logits = model.forward(np.ones((5, 2)))
        >>> model.backward(np.ones((5, 4)))["b2"]
        array([5., 5., 5., 5.])
        """
        activations = {"relu": relu_backward, "tanh": tanh_backward}
        cache_1, cache_h, cache_2 = self._cache
        dh, dW2, db2 = linear_backward(dlogits, cache_2)
        dz = activations[self.activation](dh, cache_h)
        _, dW1, db1 = linear_backward(dz, cache_1)
        return {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}


class SGD(optim.SGD):
    """The chapter's SGD, its update rule written out.

    Parameters
    ----------
    *args, **kwargs
        As the chapter's class.

    Examples
    --------
    >>> w = np.array([1.0])
    >>> SGD({"w": w}, lr=0.5).step({"w": np.array([1.0])}); w
    array([0.5])
    """

    def update(self, param: np.ndarray, grad: np.ndarray,
               state: Dict[str, np.ndarray]) -> None:
        r"""One step of gradient descent: :math:`\theta \leftarrow \theta - \eta g`.

        Parameters
        ----------
        param : ndarray
            :math:`\theta`, changed in place (its dtype kept).
        grad : ndarray, shape of ``param``
            :math:`g = \partial L / \partial \theta`.
        state : dict
            This parameter's running quantities (none for plain SGD).

        Returns
        -------
        None

        Notes
        -----
        The chapter's options, 0 unless the optimizer was given them: with
        ``self.weight_decay`` :math:`= \lambda`, :math:`g` is first
        :math:`g + \lambda \theta`; with ``self.momentum`` :math:`= \mu`, the
        step uses the buffer ``state["momentum_buffer"]``,
        :math:`b_1 = g_1`, :math:`b_t = \mu b_{t-1} + g_t`, in place of :math:`g`.

        Examples
        --------
        >>> w = np.array([1.0])
        >>> SGD({"w": w}, lr=0.1).update(w, np.array([2.0]), {})
        >>> w
        array([0.8])
        """
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


class Adam(optim.Adam):
    """The chapter's Adam, its update rule written out.

    Parameters
    ----------
    *args, **kwargs
        As the chapter's class.

    Examples
    --------
    >>> w = np.array([1.0])
    >>> Adam({"w": w}, lr=0.1).step({"w": np.array([3.0])}); w.round(6)
    array([0.9])
    """

    def update(self, param: np.ndarray, grad: np.ndarray,
               state: Dict[str, np.ndarray]) -> None:
        r"""One Adam step with bias-corrected moment estimates, in place.

        Parameters
        ----------
        param : ndarray
            :math:`\theta`, changed in place (its dtype kept).
        grad : ndarray, shape of ``param``
            :math:`g`.
        state : dict
            ``"exp_avg"`` (:math:`m`) and ``"exp_avg_sq"`` (:math:`v`), arrays
            of ``param``'s shape, changed in place.

        Returns
        -------
        None

        Notes
        -----
        With :math:`(\beta_1, \beta_2)` = ``self.betas``, :math:`\epsilon` =
        ``self.eps``, :math:`\eta` = ``self.lr``, :math:`t` =
        ``self.step_number()``, the number of this step (from 1), and :math:`g`
        first :math:`g + \lambda \theta` where ``self.weight_decay``
        :math:`= \lambda` is not 0:

        .. math::

            m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
            v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \\
            \theta &\leftarrow \theta - \eta \,
                \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon} .

        Examples
        --------
        >>> w = np.array([1.0])
        >>> opt = Adam({"w": w}, lr=0.1)
        >>> opt.step({"w": np.array([5.0])})
        >>> w.round(6)
        array([0.9])
        """
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


def train_step(model, optimizer, x: np.ndarray, targets: np.ndarray) -> float:
    r"""One step of training: forward, loss, backward, update.

    Parameters
    ----------
    model : TwoLayerMLP
        Its ``loss_and_grads(x, targets)`` returns the mean cross-entropy and
        the gradients of its parameters (forward, then backward).
    optimizer : SGD or Adam
        Its ``step(grads)`` updates the model's parameters in place.
    x : ndarray, shape (N, D) or (N,)
    targets : ndarray of int, shape (N,)

    Returns
    -------
    float
        The loss before the update.  Repeated, the steps train the network to
        the posterior of a task.

    Examples
    --------
    >>> model = TwoLayerMLP(1, 8, 2, rng=0)
    >>> opt = SGD(model.params, lr=0.5)
    >>> x, t = np.array([-2.0, 2.0]), np.array([0, 1])
    >>> first = train_step(model, opt, x, t)
    >>> later = [train_step(model, opt, x, t) for _ in range(20)][-1]
    >>> later < first
    True
    """
    loss = None  # not covered: the default
    if loss is None:
        value, grads = model.loss_and_grads(x, targets)  # forward, loss, backward
    else:
        value, grads = model.loss_and_grads(x, targets, loss=loss)
    optimizer.step(grads)  # update
    return float(value)
