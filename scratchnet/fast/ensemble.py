r"""Many networks of one shape trained at once: a seed study for about one run.

One run says little about a recipe: the spread over seeds is large.  Training
S networks one after the other costs S times the Python overhead of a step;
:class:`Ensemble` instead stacks the members along a leading axis, so that
every layer is one batched matrix product over all members
(``(S, B, d) @ (S, d, h)``), the loss and its gradient one pass over
``(S, B, M)`` logits, and the optimiser's update one call on one flat vector.

Member :math:`s` is the network :class:`scratchnet.fast.MLP` would build from
``rngs[s]`` and train on member :math:`s`'s batches; the members never mix
(each one's loss is the mean over its own batch, and the gradient of the sum
of the members' losses with respect to member :math:`s`'s parameters is its
own gradient).  ``tests/test_fast.py`` pins it: every member, trained for
1,000 steps, ends within :math:`10^{-10}` of the network trained alone.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple

import numpy as np

from .._validation import as_float_array, check_positive_int
from ..mlp import init_params
from .kernels import relu_backward_into, relu_into, tanh_backward_into, tanh_into
from .mlp import MLP, FlatParams
from .objectives import _resolve, member_losses_inplace

__all__ = ["Ensemble", "stack_batches", "stacked_epochs", "train_ensemble"]

_KERNELS = {"relu": (relu_into, relu_backward_into),
            "tanh": (tanh_into, tanh_backward_into)}


def _batched_linear(a: np.ndarray, W: np.ndarray, b: np.ndarray, out: np.ndarray
                    ) -> np.ndarray:
    """``a @ W + b`` member by member: a (S, B, in), W (S, in, out), b (S, out)."""
    if a.shape[-1] == 1:  # one input feature: an outer product, as in the engine
        np.multiply(a, W, out=out)
    else:
        np.matmul(a, W, out=out)
    out += b[:, None, :]
    return out


class Ensemble:
    r"""S MLPs of the same shape with their parameters stacked on a member axis.

    Parameters
    ----------
    sizes : sequence of int
        Layer widths, as for :class:`scratchnet.MLP`.
    rngs : sequence of (numpy.random.Generator or int)
        One per member: member ``s`` starts from the parameters of
        ``scratchnet.MLP(sizes, rng=rngs[s], ...)``.
    activation : {"relu", "tanh"}, default "relu"
    dtype : {np.float64, np.float32}, default np.float64
    init : {"xavier", "he", "torch"}, default "xavier"

    Attributes
    ----------
    params : FlatParams
        ``W1`` of shape (S, d_0, d_1), ``b1`` (S, d_1), ...: views of one
        vector, so an optimiser updates every member in one call.
    members : int
        S.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ens = sn.fast.Ensemble([1, 8, 2], rngs=[0, 1, 2])
    >>> ens.params["W2"].shape
    (3, 8, 2)
    >>> bool(np.array_equal(ens.params["W1"][1], sn.MLP([1, 8, 2], rng=1).params["W1"]))
    True
    """

    def __init__(self, sizes: Sequence[int], rngs: Sequence[Any], *,
                 activation: str = "relu", dtype: Any = np.float64,
                 init: str = "xavier") -> None:
        if isinstance(rngs, (str, bytes)) or not hasattr(rngs, "__len__") or not rngs:
            raise TypeError("rngs must be a non-empty sequence of seeds or Generators, "
                            f"one per member; got {rngs!r}")
        first = MLP(sizes, rng=rngs[0], activation=activation, dtype=dtype, init=init)
        members = [first.params] + [
            init_params(sizes, activation=activation, init=init, rng=rng, dtype=dtype)
            for rng in rngs[1:]]
        self.sizes, self.dtype, self.activation = first.sizes, first.dtype, activation
        self.members = len(rngs)
        self.layout = tuple((name, (self.members, *shape))
                            for name, shape in first.layout)
        self.params = FlatParams(np.concatenate(
            [np.stack([m[name] for m in members]).ravel() for name, _ in first.layout]),
            self.layout)
        self._phi, self._phi_backward = _KERNELS[activation]
        self._pairs = self._layers(self.params)
        self._work: Dict[int, List[np.ndarray]] = {}
        self._rows: Dict[int, np.ndarray] = {}  # np.arange(S * B), per batch size
        self._cache: Any = None

    def __repr__(self) -> str:
        return (f"fast.Ensemble({list(self.sizes)}, members={self.members}, "
                f"activation={self.activation!r})")

    def _layers(self, params: Any) -> list:
        names = [name for name, _ in self.layout]
        return [(params[w], params[b]) for w, b in zip(names[::2], names[1::2])]

    def _inputs(self, x: Any, name: str = "x") -> np.ndarray:
        x = as_float_array(x, name, allow_inf=False).astype(self.dtype, copy=False)
        d = self.sizes[0]
        if d == 1 and (x.ndim == 1 or (x.ndim == 2 and x.shape[-1] != 1)):
            x = x[..., None]  # (N,) inputs, or (S, B) batches, of one feature
        if x.ndim not in (2, 3) or x.shape[-1] != d or (
                x.ndim == 3 and x.shape[0] != self.members):
            raise ValueError(f"{name} must have shape (N, {d}), shared by the members, "
                             f"or ({self.members}, N, {d}), one batch per member; got "
                             f"shape {x.shape}")
        return x

    def _forward(self, x: np.ndarray, keep: bool) -> np.ndarray:
        """Logits (S, N, M) of checked x, (N, d) or (S, N, d)."""
        n = x.shape[-2]
        shapes = [(self.members, n, width) for width in self.sizes[1:]]
        buffers = self._work.get(n) if keep else None
        if buffers is None:
            buffers = [np.empty(shape, self.dtype) for shape in shapes]
            if keep:
                self._work = {n: buffers}
        a = x if x.ndim == 3 else np.broadcast_to(x, (self.members, *x.shape))
        activations = [a]
        for (W, b), out in zip(self._pairs[:-1], buffers):
            a = self._phi(_batched_linear(a, W, b, out))
            activations.append(a)
        W, b = self._pairs[-1]
        logits = _batched_linear(a, W, b, buffers[-1])
        if keep:
            self._cache = activations
        return logits

    def _backward(self, dlogits: np.ndarray) -> FlatParams:
        """Fresh gradients (a new flat vector) of the last kept forward pass."""
        activations = self._cache
        grads = FlatParams(np.empty_like(self.params.flat), self.layout)
        grad_pairs, dz = self._layers(grads), dlogits
        for layer in range(len(self._pairs) - 1, -1, -1):
            (W, _), (dW, db) = self._pairs[layer], grad_pairs[layer]
            a = activations[layer]
            np.matmul(a.transpose(0, 2, 1), dz, out=dW)
            np.add.reduce(dz, axis=1, out=db)
            if layer:
                da = np.matmul(dz, W.transpose(0, 2, 1))
                dz = self._phi_backward(da, a, np.empty_like(da))
        return grads

    def loss_and_grads(self, x: Any, targets: Any, *, loss: Any = None
                       ) -> Tuple[np.ndarray, FlatParams]:
        r"""Each member's mean loss on its batch, and all the gradients.

        Parameters
        ----------
        x : array_like, shape (S, B, d_0) (or (S, B) when d_0 = 1)
            Member ``s``'s batch is ``x[s]``.
        targets : array_like of int, shape (S, B)
        loss : str or Loss, optional
            ``"cross_entropy"`` (the default, fused), ``"mse"`` (squared
            error on one-hot targets), ``"hinge"``, or a loss object: member
            ``s``'s loss is that of ``loss`` on its own batch
            (:func:`scratchnet.fast.objectives.member_losses_inplace`).

        Returns
        -------
        losses : ndarray of float64, shape (S,)
        grads : FlatParams
            Member ``s``'s slice is the gradient of its own loss.

        Examples
        --------
        >>> import scratchnet as sn
        >>> ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1])
        >>> losses, grads = ens.loss_and_grads(np.zeros((2, 3)), np.zeros((2, 3), int))
        >>> losses.shape, grads["W1"].shape
        ((2,), (2, 1, 4))
        """
        x = self._inputs(x)
        if x.ndim != 3:
            raise ValueError(f"x must hold one batch per member, shape ({self.members},"
                             f" B, {self.sizes[0]}); got shape {x.shape}")
        t = np.asarray(targets)
        m = self.sizes[-1]
        if t.shape != x.shape[:2] or t.dtype.kind not in "iu" or (
                t.size and (t.min() < 0 or t.max() >= m)):
            raise ValueError(f"targets must be class indices in [0, {m}) of shape "
                             f"{x.shape[:2]}; got shape {t.shape}, dtype {t.dtype}")
        logits = self._forward(x, keep=True)
        loss = _resolve(loss)
        if loss is not None:  # mse, hinge, any loss object: every member at once
            return member_losses_inplace(logits, t, loss), self._backward(logits)
        rows = self._rows.get(t.size)
        if rows is None:
            rows = self._rows[t.size] = np.arange(t.size)
        losses = _cross_entropy_and_grad_inplace(logits, t, rows)  # -> dL/dlogits
        return losses, self._backward(logits)

    def forward(self, x: Any) -> np.ndarray:
        r"""The outputs (logits) of every member, on shared or per-member inputs.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1), or (S, N, d_0)
            Inputs shared by the members, or member ``s``'s own in ``x[s]``.

        Returns
        -------
        ndarray, shape (S, N, M)
            A new array.

        Examples
        --------
        >>> import scratchnet as sn
        >>> ens = sn.fast.Ensemble([1, 4, 3], rngs=[0, 1])
        >>> ens.forward([0.0, 1.0]).shape, ens.forward(np.zeros((2, 5, 1))).shape
        ((2, 2, 3), (2, 5, 3))
        """
        return self._forward(self._inputs(x), keep=False).copy()

    def predict_log_proba(self, x: Any, member: int | None = None) -> np.ndarray:
        r"""Log-posteriors of every member (or one) on shared inputs.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
        member : int, optional
            Only this member (its (N, M) answer).

        Returns
        -------
        ndarray, shape (S, N, M), or (N, M) for one member

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.fast.Ensemble([1, 4, 3], rngs=[0, 1]).predict_log_proba([0.0]).shape
        (2, 1, 3)
        """
        x = self._inputs(x)
        if x.ndim != 2:
            raise ValueError(f"x must have shape (N, {self.sizes[0]}); got {x.shape}")
        if member is not None:
            return self.member(member).predict_log_proba(x)
        logits = self._forward(x, keep=False)
        shifted = logits - logits.max(axis=-1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))

    def predict_proba(self, x: Any, member: int | None = None) -> np.ndarray:
        """``exp(predict_log_proba(x, member))``.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
        member : int, optional

        Returns
        -------
        ndarray, shape (S, N, M), or (N, M) for one member

        Examples
        --------
        >>> import scratchnet as sn
        >>> p = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1]).predict_proba([0.0, 1.0])
        >>> p.shape, bool(np.allclose(p.sum(axis=-1), 1))
        ((2, 2, 2), True)
        """
        return np.exp(self.predict_log_proba(x, member))

    def member(self, s: int) -> MLP:
        """Member ``s`` as a network of its own (a copy of its parameters).

        Parameters
        ----------
        s : int

        Returns
        -------
        scratchnet.fast.MLP

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.fast.Ensemble([1, 4, 2], rngs=[0, 1]).member(1)
        fast.MLP([1, 4, 2], activation='relu')
        """
        if not 0 <= s < self.members:
            raise IndexError(f"member must be in [0, {self.members}); got {s}")
        net = MLP(self.sizes, activation=self.activation, dtype=self.dtype)
        for name in net.params:
            net.params[name] = self.params[name][s]
        return net


def _cross_entropy_and_grad_inplace(logits: np.ndarray, targets: np.ndarray,
                                    rows: np.ndarray) -> np.ndarray:
    """``kernels.cross_entropy_and_grad_inplace`` per member: (S, B, M) logits,
    (S, B) targets, ``rows = np.arange(S * B)``; returns the S mean losses."""
    members, n, m = logits.shape
    flat, t = logits.reshape(-1, m), targets.reshape(-1)
    flat -= np.maximum.reduce(flat, axis=1, keepdims=True)  # largest logit 0
    picked = flat[rows, t].reshape(members, n)  # f_{n, c_n} - max_n
    np.exp(flat, out=flat)
    total = np.add.reduce(flat, axis=1, keepdims=True)  # in [1, M]
    losses = (np.log(total).reshape(members, n).sum(axis=1) - picked.sum(axis=1)) / n
    total *= n
    flat /= total  # q / B
    flat[rows, t] -= 1.0 / n  # (q - one_hot) / B
    return losses.astype(np.float64)


def stack_batches(iterators: Sequence[Iterator]
                  ) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """One batch per member per step: ``(x (S, B, d), c (S, B))``.

    Parameters
    ----------
    iterators : sequence of iterators of (x, c)
        Member ``s``'s batches, e.g. :func:`scratchnet.train.epochs` of its
        own sample.  They must yield batches of equal size at every step.

    Yields
    ------
    (x, c)

    Examples
    --------
    >>> import scratchnet as sn
    >>> from scratchnet.train import epochs
    >>> rng = np.random.default_rng(0)
    >>> its = [epochs(np.zeros((4, 1)), np.zeros(4, int), 2, rng) for _ in range(3)]
    >>> x, c = next(sn.fast.stack_batches(its))
    >>> x.shape, c.shape
    ((3, 2, 1), (3, 2))
    """
    while True:
        pairs = [next(it) for it in iterators]
        yield np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])


def stacked_epochs(datasets: Sequence[Tuple[np.ndarray, np.ndarray]], batch_size: int,
                   rngs: Sequence[np.random.Generator]
                   ) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """``stack_batches`` of each member's :func:`scratchnet.train.epochs`, gathered
    in one indexing operation per step.

    Parameters
    ----------
    datasets : sequence of (x, c)
        One fixed dataset per member, all of the same size n.
    batch_size : int
    rngs : sequence of numpy.random.Generator
        Member ``s``'s shuffling: its permutations are exactly those of
        ``epochs(x_s, c_s, batch_size, rngs[s])``.

    Yields
    ------
    (x, c)
        Of shapes (S, B, ...) and (S, B); the last partial batch of an epoch
        is kept.

    Examples
    --------
    >>> import scratchnet as sn
    >>> data = [(np.arange(5.0)[:, None], np.arange(5)) for _ in range(2)]
    >>> rngs = [np.random.default_rng(s) for s in range(2)]
    >>> x, c = next(sn.fast.stacked_epochs(data, 2, rngs))
    >>> x.shape, c.shape
    ((2, 2, 1), (2, 2))
    """
    x_all = np.stack([x for x, _ in datasets])
    c_all = np.stack([c for _, c in datasets])
    n, members = x_all.shape[1], np.arange(len(datasets))[:, None]
    while True:
        order = np.stack([rng.permutation(n) for rng in rngs])
        for start in range(0, n, batch_size):
            rows = order[:, start:start + batch_size]
            yield x_all[members, rows], c_all[members, rows]


def train_ensemble(ensemble: Ensemble, batches: Iterator, *, steps: int, optimizer: Any,
                   lr: Callable[[int], float] | None = None,
                   snapshot_steps: Sequence[int] = (),
                   on_snapshot: Callable[[int, Ensemble], Any] | None = None,
                   progress: bool = False, loss: Any = None) -> np.ndarray:
    """Train every member at once: ``train_step`` on the stacked batches, recorded.

    Parameters
    ----------
    ensemble : Ensemble
    batches : iterator of (x (S, B, d), c (S, B))
        E.g. :func:`stack_batches`.
    steps : int
    optimizer : Optimizer
        Built on ``ensemble.params`` (one update for every member).
    lr : callable, optional
        A schedule ``lr(step)`` (0-based), set before each update.
    snapshot_steps : sequence of int, optional
        After these steps, ``on_snapshot(step, ensemble)`` is called.
    on_snapshot : callable, optional
    progress : bool, default False
        A progress line on stderr.
    loss : str or Loss, optional
        As in :meth:`Ensemble.loss_and_grads` (default: the cross-entropy).

    Returns
    -------
    ndarray of float64, shape (steps, S)
        Every member's loss at every step.

    Examples
    --------
    >>> import scratchnet as sn
    >>> from scratchnet.train import epochs
    >>> task = sn.tasks.separated()
    >>> data = [task.sample(256, np.random.default_rng(s)) for s in range(3)]
    >>> its = [epochs(x, c, 64, np.random.default_rng(s))
    ...        for s, (x, c) in enumerate(data)]
    >>> ens = sn.fast.Ensemble([1, 16, 2], rngs=[0, 1, 2])
    >>> losses = sn.fast.train_ensemble(ens, sn.fast.stack_batches(its), steps=50,
    ...                                 optimizer=sn.Adam(ens.params, lr=1e-2))
    >>> losses.shape, bool(losses[-10:].mean() < losses[:10].mean())
    ((50, 3), True)
    """
    steps = check_positive_int(steps, "steps")
    snaps = set(snapshot_steps)
    loss = _resolve(loss)  # once, not at every step
    losses = np.empty((steps, ensemble.members))
    start = last = time.perf_counter()
    with np.errstate(all="ignore"):
        for step in range(1, steps + 1):
            if lr is not None:
                optimizer.lr = lr(step - 1)
            x, c = next(batches)
            losses[step - 1], grads = ensemble.loss_and_grads(x, c, loss=loss)
            optimizer.step(grads)
            if not math.isfinite(losses[step - 1].sum()):
                raise FloatingPointError(f"a member's loss became non-finite at step "
                                         f"{step}: {losses[step - 1]}")
            if step in snaps and on_snapshot is not None:
                on_snapshot(step, ensemble)
            if progress and time.perf_counter() - last > 0.2:
                last = time.perf_counter()
                rate = step / (last - start)
                print(f"\rstep {step:,}/{steps:,}  {ensemble.members} members  "
                      f"{rate:,.0f} steps/s  {(steps - step) / rate:.0f} s left",
                      end="", file=sys.stderr, flush=True)
    if progress:
        elapsed = time.perf_counter() - start
        print(f"\rstep {steps:,}/{steps:,}  {elapsed:.1f} s" + " " * 30,
              file=sys.stderr, flush=True)
    return losses
