r"""The conventions every figure shares: its axes and its colours.

Each drawing function of :mod:`scratchnet.plotting` takes an optional
matplotlib ``Axes`` (``ax=None`` makes a new figure) and returns the ``Axes``
it drew on; none calls ``plt.show``.  Colours come from the Okabe-Ito
palette, which stays distinguishable under the common forms of colour
blindness; class :math:`c_i` always has colour ``CLASS_COLORS[i - 1]``, and
the same colours, in the same order, tell tasks and fits apart.
"""

from __future__ import annotations

__all__ = ["CLASS_COLORS", "METRIC_LABELS"]

#: Okabe-Ito colours, in the order used for classes, tasks and fits.
CLASS_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7",
                "#E69F00", "#56B4E9", "#F0E442", "#000000")

#: Axis labels of the metrics of :func:`scratchnet.experiments.run`, by key.
METRIC_LABELS = {
    "expected_kl": r"$E_x\, KL(P(C\mid x)\,\|\,q(C\mid x))$ (nats)",
    "max_abs_error": r"$\max_{x \in [-4, 7]} |q(c\mid x) - P(c\mid x)|$",
    "loss_gap": "training loss minus its Bayes floor (nats)",
}
LINESTYLES = ("-", "--", ":", "-.")   # one per curve of a training plot, cycled
