r"""Where the batches come from: a task, a fixed dataset, or a sampler.

Training draws one batch :math:`(x_j, c_j)_{j=1}^{B}` per step.  Drawn fresh
from the generative model :math:`P(X, C)` (a task's ``sample``), the batch
loss is an unbiased estimate of the population loss; from a fixed sample of
n points, shuffled epochs (as ``DataLoader(shuffle=True)``) estimate the
loss on that sample, whose minimiser is the posterior only as n grows.
:func:`batches_of` gives :func:`scratchnet.train` its iterator, checking the
first batch against the model's inputs and outputs.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Tuple

import numpy as np

from ._validation import (
    as_class_indices,
    as_float_array,
    as_generator,
    check_positive_int,
)

__all__ = ["batches_of", "check_inputs", "epochs", "hold_out"]

Batches = Iterator[Tuple[np.ndarray, np.ndarray]]


def check_inputs(x: Any, model: Any, name: str) -> np.ndarray:
    """``x`` as an (n, D) float array for a model with D inputs (when it says D).

    Parameters
    ----------
    x : array_like, shape (n, D), or (n,) when D = 1
    model : MLP or any model
        Its ``sizes[0]`` is D; a model without ``sizes`` takes any shape.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    ndarray, shape (n, D)

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.batches.check_inputs([0.0, 1.0], sn.MLP([1, 4, 2], rng=0), "x").shape
    (2, 1)
    """
    x = as_float_array(x, name, allow_inf=False)
    sizes = getattr(model, "sizes", None)
    if sizes is None:
        return x
    d = sizes[0]
    if x.ndim == 1 and d == 1:
        x = x.reshape(-1, 1)
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(f"{name} must have shape (n, {d}) for this model; "
                         f"got shape {x.shape}")
    return x


def _check_batch(x: Any, c: Any, model: Any, source: str) -> Tuple[np.ndarray, Any]:
    """Check a batch against the model's inputs and outputs, naming its source."""
    x, c = check_inputs(x, model, f"x from the {source}"), np.asarray(c)
    m = max(getattr(model, "sizes", (2,))[-1], 2)
    if c.dtype.kind in "iub":
        c = as_class_indices(c, m, f"labels c from the {source}")
    if c.shape[:1] != (x.shape[0],):
        raise ValueError(f"labels c from the {source} must have one label per row of "
                         f"x, shape ({x.shape[0]},); got {c.shape}")
    return x, c


def epochs(x: np.ndarray, c: np.ndarray, batch_size: int,
           rng: np.random.Generator) -> Batches:
    """Endless shuffled passes over a fixed dataset, as ``DataLoader(shuffle=True)``.

    Parameters
    ----------
    x : ndarray, shape (n, ...)
    c : ndarray, shape (n, ...)
    batch_size : int
    rng : numpy.random.Generator or int
        Draws a new permutation at the start of every epoch.

    Yields
    ------
    (x_batch, c_batch)
        Consecutive slices of the permuted data; the last, partial batch of
        an epoch is kept (``drop_last=False``).

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.train import epochs
    >>> batches = epochs(np.arange(5.0), np.arange(5), 2, np.random.default_rng(0))
    >>> [len(next(batches)[0]) for _ in range(4)]
    [2, 2, 1, 2]
    """
    batch_size = check_positive_int(batch_size, "batch_size")
    rng = as_generator(rng)
    while True:
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch_size):
            batch = order[start:start + batch_size]
            yield x[batch], c[batch]


def _draws(sample: Callable, batch_size: int, rng: np.random.Generator,
           model: Any, source: str) -> Batches:
    """Fresh batches; the first is checked here, all by the model."""
    first = sample(batch_size, rng)
    if not (isinstance(first, (tuple, list)) and len(first) == 2):
        raise TypeError(f"the {source} must return a pair (x, c) of inputs and labels; "
                        f"got {type(first).__name__}")
    yield _check_batch(*first, model, source)
    while True:
        yield sample(batch_size, rng)


def batches_of(data: Any, model: Any, batch_size: int, rng: np.random.Generator
               ) -> Tuple[Batches, Any]:
    """The batches that train ``model``: from a task, a fixed dataset or a sampler.

    Parameters
    ----------
    data : task, (x, c) or callable
        A task (``.sample(n, rng)``): a fresh batch every step; a pair
        ``(x, c)``: shuffled epochs (:func:`epochs`); a sampler
        ``sampler(n, rng) -> (x, c)``.
    model : MLP or any model
        The first batch is checked against its inputs and outputs.
    batch_size : int
        At most n for a fixed dataset.
    rng : numpy.random.Generator

    Returns
    -------
    batches : iterator of (x, c)
        Endless.
    task : task or None
        ``data`` when it is a task.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> model = sn.MLP([1, 4, 2], rng=0)
    >>> batches, task = sn.batches.batches_of(sn.tasks.separated(), model, 8,
    ...                                       np.random.default_rng(0))
    >>> [a.shape for a in next(batches)], task.num_classes
    ([(8, 1), (8,)], 2)
    """
    if isinstance(data, (tuple, list)):
        if len(data) != 2:
            raise ValueError("a fixed dataset must be a pair (x, c); got a "
                             f"{type(data).__name__} of length {len(data)}")
        x = as_float_array(data[0], "x", allow_empty=False)
        if x.ndim == 0:
            raise TypeError("x must be a sequence of inputs, shape (n,) or (n, d); "
                            f"got the scalar {data[0]!r}")
        if np.ndim(data[1]) == 0:
            raise TypeError("c must be a sequence of labels, one per input; got "
                            f"{data[1]!r}")
        if len(x) != len(data[1]):
            raise ValueError(f"x and c must have the same length; got {len(x)} "
                             f"inputs and {len(data[1])} labels")
        if batch_size > len(x):
            raise ValueError(f"batch_size must be at most the dataset size {len(x)}; "
                             f"got {batch_size}")
        x, c = _check_batch(x, data[1], model, "dataset")
        dtype = getattr(model, "dtype", x.dtype)
        return epochs(x.astype(dtype, copy=False), c, batch_size, rng), None
    if hasattr(data, "sample"):
        return _draws(data.sample, batch_size, rng, model, "task"), data
    if callable(data):
        return _draws(data, batch_size, rng, model, "sampler"), None
    raise TypeError("data must be a task (with .sample(n, rng)), a pair (x, c) or "
                    f"a sampler(n, rng) -> (x, c); got {type(data).__name__}")


def hold_out(data: Any, validation: Any, model: Any, rng: np.random.Generator
             ) -> Tuple[Any, Tuple[np.ndarray, np.ndarray]]:
    """The data to train on and a validation set held out from it.

    Parameters
    ----------
    data : task, (x, c) or callable
        As :func:`batches_of` takes it.
    validation : (x_val, c_val) or float
        A validation set, or the share in (0, 1) of a fixed dataset ``data``
        to hold out (drawn at random with ``rng``; at least one sample on
        each side).
    model : MLP or any model
        The validation set is checked against its inputs and outputs.
    rng : numpy.random.Generator

    Returns
    -------
    data : task, (x, c) or callable
        ``data`` without the held-out samples.
    validation : (ndarray (n_val, D), ndarray (n_val,))

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> model = sn.MLP([1, 4, 2], rng=0)
    >>> data = (np.arange(10.0), np.arange(10) % 2)
    >>> (x, c), (x_val, c_val) = sn.batches.hold_out(data, 0.2, model,
    ...                                              np.random.default_rng(0))
    >>> len(x), x_val.shape
    (8, (2, 1))
    """
    if isinstance(validation, (tuple, list)):
        if len(validation) != 2:
            raise ValueError("validation must be a pair (x, c) or a share in (0, 1) "
                             f"of the dataset; got a {type(validation).__name__} of "
                             f"length {len(validation)}")
        return data, _check_batch(*validation, model, "validation set")
    if isinstance(validation, (bool, np.bool_)) or not isinstance(
            validation, (float, np.floating)) or not 0 < validation < 1:
        raise TypeError("validation must be a pair (x, c) or a share in (0, 1) of "
                        f"the dataset; got {validation!r}")
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise TypeError("validation as a share needs a fixed dataset (x, c) as data; "
                        "with a task or a sampler, pass a validation set (x, c)")
    x, c = _check_batch(as_float_array(data[0], "x"), data[1], model, "dataset")
    n_val = round(validation * len(x))
    if not 1 <= n_val < len(x):
        raise ValueError(f"validation={validation} of {len(x)} samples leaves no "
                         "sample on one side; use a larger dataset or share")
    order = rng.permutation(len(x))
    keep, held = np.sort(order[n_val:]), np.sort(order[:n_val])
    return (x[keep], c[keep]), (x[held], c[held])
