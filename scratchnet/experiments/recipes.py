r"""How to train: the recipes of the reproduction, each a row of one table.

A *recipe* fixes everything about a run but the task and the seed: the
network, the optimiser, its learning rate and schedule, the batch size and,
as important as any of them, where the training inputs come from.  The
minimiser of the expected cross-entropy is :math:`P(C \mid x)` wherever the
training inputs have density, and only there, so the data are part of the
recipe:

========  ============  ===================  =====  ========================  =====
recipe    network       optimiser            batch  data                      steps
========  ============  ===================  =====  ========================  =====
original  1-64-64-2     Adam 1e-3            64     fixed 100k, reshuffled    50000
textbook  1-64-2        SGD 0.1              64     fresh P(X, C) per step    10000
covering  1-64-64-2     Adam 3e-3, cosine    64     1/2 P(X) + 1/2 U(-6, 9),  10000
                        to 1e-5                     labels ~ P(C | x)
========  ============  ===================  =====  ========================  =====

``original`` is the setting of the study this library reproduces
(:data:`ORIGINAL_STUDY`: Yudi Xie, "How do we interpret the outputs of a neural
network trained on classification?", 2024),
``textbook`` the smallest network and the plainest optimiser (for the
notebooks), and ``covering`` the fix for ``original``'s failure on the
sparse-tail task: inputs that cover the whole plotted range, labelled by the
ideal labeller ``task.sample_labels``, and an annealed learning rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .._validation import check_positive_int
from ..schedules import CosineAnnealingLR
from ._checks import choice, finite, integers, text

__all__ = [
    "COVERING",
    "LOSSES",
    "ORIGINAL",
    "ORIGINAL_SECONDS_PER_SETTING",
    "ORIGINAL_STUDY",
    "RECIPES",
    "TEXTBOOK",
    "Recipe",
    "get_recipe",
]

#: The study the ``original`` recipe reproduces, cited wherever it is named.
ORIGINAL_STUDY = ('Yudi Xie, "How do we interpret the outputs of a neural network '
                  'trained on classification?", 2024, '
                  "https://yudixie.github.io/blog/2024/interpret-classification/")

#: Seconds per task of the original training loop (50,000 batches, PyTorch, one
#: core) on the 2-core machine the timings in the README were measured on (a
#: PyTorch transcription of it, timed by ``benchmarks/bench_default_run.py``).
ORIGINAL_SECONDS_PER_SETTING = 66.0

#: The losses a recipe may train with: cross-entropy, squared error on one-hot
#: targets (minimised by the posterior too) and the multi-class hinge (names of
#: :data:`scratchnet.objectives.LOSSES`).
LOSSES = ("cross_entropy", "mse", "hinge")

_SNAPSHOTS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000)


@dataclass(frozen=True)
class Recipe:
    r"""How to train: one row of the recipe table.

    Parameters
    ----------
    name : str
    sizes : tuple of int
        Layer sizes of the ReLU network (trained on the fast path,
        :class:`scratchnet.fast.Ensemble`, one member per seed).
    optimizer : {"adam", "sgd"}
        With :func:`scratchnet.train`'s defaults (Adam: betas (0.9, 0.999),
        no weight decay).
    lr : float
        The learning rate (the first one, with a schedule).
    batch_size : int
    data : {"fixed", "stream", "covering"}
        ``"fixed"``: one sample of ``dataset_size`` pairs of :math:`P(X, C)`,
        reshuffled every epoch.  ``"stream"``: a fresh batch of the task at
        every step.  ``"covering"``: fresh inputs for every step, a fraction
        ``mix`` from :math:`P(X)` and the rest uniform on ``input_range``,
        labelled by ``task.sample_labels`` (all drawn before training in one
        vectorised call and fed as a single epoch).
    steps : int
        Default number of updates.
    snapshot_steps : tuple of int
        Where the network is measured; those past the run are dropped and the
        last step is always measured.
    schedule : {"constant", "cosine"}, default "constant"
        ``"cosine"`` anneals ``lr`` to ``lr_final`` over the run's :math:`T`
        steps: :math:`\eta_t = \eta_\mathrm{final} + \tfrac12 (\eta -
        \eta_\mathrm{final})(1 + \cos(\pi t / T))`, :math:`t = 0, \dots, T-1`
        (:class:`scratchnet.CosineAnnealingLR` with ``T_max = T``).
    lr_final : float, default 0.0
    momentum : float, default 0.0
        SGD only.
    dataset_size : int, default 100000
        For ``data="fixed"``.
    input_range : (float, float), default (-6.0, 9.0)
        For ``data="covering"``.
    mix : float, default 0.5
        For ``data="covering"``: the expected fraction of inputs from
        :math:`P(X)`.
    init : {"xavier", "he", "torch"}, default "xavier"
        The initialisation (:func:`scratchnet.mlp.init_params`).
    dtype : {"float64", "float32"}, default "float64"
    description : str, default ""
    loss : {"cross_entropy", "mse", "hinge"}, default "cross_entropy"
        What training minimises (:data:`LOSSES`).  The networks' outputs are
        read through that loss's readout,
        ``scratchnet.objectives.get_loss(loss).predict_proba``: the softmax
        for the cross-entropy, the outputs themselves for ``"mse"``, the
        one-hot decision for ``"hinge"`` (:mod:`scratchnet.readouts`).

    Raises
    ------
    TypeError, ValueError
        For a field of the wrong kind or out of range, naming the field.

    Examples
    --------
    >>> import scratchnet as sn
    >>> recipe = sn.experiments.RECIPES["covering"]
    >>> recipe.optimizer, recipe.lr, recipe.batch_size, recipe.steps
    ('adam', 0.003, 64, 10000)
    """

    name: str
    sizes: tuple[int, ...]
    optimizer: str
    lr: float
    batch_size: int
    data: str
    steps: int
    snapshot_steps: tuple[int, ...]
    schedule: str = "constant"
    lr_final: float = 0.0
    momentum: float = 0.0
    dataset_size: int = 100_000
    input_range: tuple[float, float] = (-6.0, 9.0)
    mix: float = 0.5
    init: str = "xavier"
    dtype: str = "float64"
    description: str = ""
    loss: str = "cross_entropy"

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalise the fields once
        text(self.name, "name")
        text(self.description, "description")
        sizes = integers(self.sizes, "sizes")
        if len(sizes) < 2:
            raise ValueError(f"sizes must hold at least an input and an output size; "
                             f"got {sizes!r}")
        set_(self, "sizes", sizes)
        choice(self.optimizer, "optimizer", ("adam", "sgd"))
        set_(self, "lr", finite(self.lr, "lr", low=0.0, low_inclusive=False))
        set_(self, "batch_size", check_positive_int(self.batch_size, "batch_size"))
        choice(self.data, "data", ("fixed", "stream", "covering"))
        set_(self, "steps", check_positive_int(self.steps, "steps"))
        set_(self, "snapshot_steps", integers(self.snapshot_steps, "snapshot_steps",
                                              allow_empty=True))
        choice(self.schedule, "schedule", ("constant", "cosine"))
        set_(self, "lr_final", finite(self.lr_final, "lr_final", low=0.0))
        set_(self, "momentum", finite(self.momentum, "momentum", low=0.0, high=1.0))
        set_(self, "dataset_size", check_positive_int(self.dataset_size,
                                                      "dataset_size"))
        pair = self.input_range
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (tuple, list)) \
                or len(pair) != 2:
            raise TypeError(f"input_range must be a pair (low, high); got {pair!r}")
        low, high = (finite(v, "input_range entries") for v in pair)
        if not low < high:
            raise ValueError(f"input_range must have low < high; got {pair!r}")
        set_(self, "input_range", (low, high))
        set_(self, "mix", finite(self.mix, "mix", low=0.0, high=1.0))
        choice(self.init, "init", ("xavier", "he", "torch"))
        choice(self.dtype, "dtype", ("float64", "float32"))
        choice(self.loss, "loss", LOSSES)
        if sizes[-1] == 1 and self.loss != "mse":   # one output: the class-1 logit
            raise ValueError(f"loss={self.loss!r} needs one output per class, and "
                             f"sizes={sizes!r} ends in one output; with one output a "
                             "recipe trains with loss='mse' (or end sizes in 2)")

    def learning_rate(self, steps: int) -> Union[float, CosineAnnealingLR]:
        """The ``lr`` argument of :func:`scratchnet.train` for a run of ``steps``.

        Parameters
        ----------
        steps : int
            The length :math:`T` of the run (a cosine schedule spans it).

        Returns
        -------
        float or CosineAnnealingLR
            ``lr`` itself, or the schedule ``t -> rate`` (``t`` from 0).

        Examples
        --------
        >>> import scratchnet as sn
        >>> lr = sn.experiments.COVERING.learning_rate(10_000)
        >>> print(f"{lr(0):.0e} {lr(5000):.2e} {lr(10_000):.0e}")
        3e-03 1.51e-03 1e-05
        """
        steps = check_positive_int(steps, "steps")
        if self.schedule == "constant":
            return self.lr
        if self.schedule != "cosine":
            raise ValueError(f"schedule must be 'constant' or 'cosine'; "
                             f"got {self.schedule!r}")
        return CosineAnnealingLR(self.lr, T_max=steps, eta_min=self.lr_final)


#: The original study's setting, exactly: PyTorch's default initialisation, float32.
ORIGINAL = Recipe(
    "original", (1, 64, 64, 2), "adam", 1e-3, 64, "fixed", 50_000, _SNAPSHOTS,
    init="torch", dtype="float32",
    description="the original study: Adam 1e-3 on a fixed 100k sample, reshuffled")
#: The library's default story: the two-layer network, plain SGD, fresh batches.
TEXTBOOK = Recipe(
    "textbook", (1, 64, 2), "sgd", 0.1, 64, "stream", 10_000, _SNAPSHOTS[:10],
    description="two-layer net, plain SGD, a fresh mini-batch of P(X, C) per step")
#: Inputs covering [-6, 9] and an annealed rate: the posterior on all of [-4, 7].
COVERING = Recipe(
    "covering", (1, 64, 64, 2), "adam", 3e-3, 64, "covering", 10_000,
    _SNAPSHOTS[:10], schedule="cosine", lr_final=1e-5, input_range=(-6.0, 9.0),
    mix=0.5, dtype="float32",
    description="inputs cover [-6, 9]; Adam with a cosine-annealed rate")
#: The recipes by name.
RECIPES = {recipe.name: recipe for recipe in (ORIGINAL, TEXTBOOK, COVERING)}


def get_recipe(name: Union[str, Recipe]) -> Recipe:
    """The recipe called ``name``.

    Parameters
    ----------
    name : str or Recipe
        A key of :data:`RECIPES`; a :class:`Recipe` is returned as it is.

    Returns
    -------
    Recipe

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.experiments.get_recipe("original").batch_size
    64
    """
    if isinstance(name, Recipe):
        return name
    if not isinstance(name, str):
        raise TypeError(f"recipe must be a name ({', '.join(map(repr, RECIPES))}) "
                        f"or a Recipe; got {type(name).__name__}")
    if name not in RECIPES:
        raise ValueError(f"unknown recipe {name!r}; expected one of "
                         f"{', '.join(repr(k) for k in RECIPES)}")
    return RECIPES[name]
