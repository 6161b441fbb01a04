r"""The fast path: the chapters' mathematics, engineered for speed and pinned to them.

The chapters (``scratchnet.layers``, ``scratchnet.mlp``, ...) are written to be
read; this package is written to run fast.  Every piece says which chapter
function it replaces, and ``tests/test_fast*.py`` check that the two compute
the same thing:

======================  ===============================  ==========================
fast path               replaces                         pinned by (test_fast.py)
======================  ===============================  ==========================
``fast.MLP``            ``sn.MLP``, ``sn.TwoLayerMLP``   ``test_engine_matches_*``,
                        (flat parameters, reused         ``test_training_ends_*``,
                        buffers, fused cross-entropy;    ``test_engine_subclass_*``
                        subclasses, probability
                        targets)
``fast.FlatParams``     the ``params`` dict (views of    ``test_flat_params_*``,
                        one vector, updated whole)       ``test_optim.py``
``kernels.*_into``      ``layers.*_forward/_backward``   ``test_kernels_match_*``
``kernels.cross_``      ``losses.cross_entropy_and_``    ``test_fused_cross_*``
``entropy_and_grad_``   ``grad`` on S batches: the one
``inplace``             fused kernel, of ``fast.MLP``
                        (S = 1) and ``fast.Ensemble``
``fast.Ensemble``       S ``fast.MLP`` trained one by    ``test_ensemble_*``
                        one (a member axis, bias rows)
``fast.Adam``           ``sn.Adam`` itself, its update   ``test_fast_adam_*``
                        on the whole flat vector
                        (``Optimizer.step``); its own
                        copy into scratch memory saved
                        2-4% of a step (3 µs of 70 at
                        S = 1, 15 of 600 at S = 18):
                        under the 10% bar, removed
``fast.train``          ``sn.train``'s loop of           ``test_fast_train.py``,
                        ``train_step``: one loop for     ``test_ensemble_*``,
                        ``fast.MLP`` and                 ``test_non_finite_*``
                        ``fast.Ensemble`` (one stacked
                        step of every member), finite
                        checks; ``train_ensemble`` its
                        earlier name
``kernels.fused_``      the choice between the fused     ``test_the_fused_path_*``,
``cross_entropy``       kernel and ``loss.loss_and_``    ``test_*_every_option_*``
                        ``grad`` (one place)             (``test_fast_edges.py``)
``objectives.member_``  ``get_loss(loss).loss_and_``     ``test_member_losses_*``,
``losses_inplace``      ``grad`` on each member's batch  ``test_ensemble_loss_*``
                        (cross-entropy, mse, hinge, any
                        loss object)
``model.loss`` and the  ``sn.MLP``'s readout through     ``test_fast_readout.py``
predictions             its loss
``fast.stacked_``       ``task.sample`` per member and   ``test_stacked_stream_*``
``stream``              step (``stack_batches``)
``fast.stacked_``       ``train.epochs`` per member      ``test_stacked_epochs_*``
``epochs``              (one gather per epoch)
``kernels.relu_mask_``  ``layers.relu_forward`` /        ``test_relu_kernels_*``
``into`` and its        ``relu_backward`` (the mask
backward                kept in the inputs' dtype)
======================  ===============================  ==========================

The experiments, the command line and ``benchmarks/bench_training.py`` run
the fast path; students read the chapters.

Examples
--------
>>> import scratchnet as sn
>>> model = sn.fast.MLP([1, 64, 2], rng=0)
>>> history = sn.train(model, sn.tasks.separated(), steps=10, batch_size=64,
...                    lr=0.1, rng=0)
>>> history.steps
10
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..softmax import log_softmax as chapter_log_softmax
from . import kernels, objectives, training  # noqa: F401  (documented on this page)
from .ensemble import Ensemble
from .mlp import MLP
from .optim import Adam as Adam  # the chapter's (fast.optim says why)
from .params import FlatParams, StackedParams
from .streams import stack_batches, stacked_epochs, stacked_stream
from .training import train, train_ensemble

# Adam is the chapter's own class (documented there), importable from here
# under its old fast-path name; train_ensemble is train (the same function) under
# its name from before it drove fast.MLP, kept for code written before.
__all__ = ["MLP", "Ensemble", "FlatParams", "StackedParams", "log_softmax",
           "stack_batches", "stacked_epochs", "stacked_stream", "train",
           "train_ensemble"]


def log_softmax(x: Any, axis: int = -1) -> np.ndarray:
    """:func:`scratchnet.log_softmax` itself, under its old fast-path name.

    The fast path's cache-blocked copy ran at 1.00 to 1.04 times SciPy's time,
    no gain worth a second implementation, and was removed (issue 23); the
    name stays while ``tests/test_bad_inputs.py`` and the README name it.

    Parameters
    ----------
    x : array_like
    axis : int, default -1

    Returns
    -------
    ndarray, same shape as ``x``

    Examples
    --------
    >>> from scratchnet import fast
    >>> fast.log_softmax([0.0, -1e4])
    array([     0., -10000.])
    """
    return chapter_log_softmax(x, axis=axis)
