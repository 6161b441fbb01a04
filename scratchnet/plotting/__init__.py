r"""The figures: a network's softmax outputs next to the Bayes posterior.

Every figure of the library is drawn here, from plain arrays, so that the
command line, the notebooks and a student's own script show the same thing.
The central one puts the two sides of the claim on one plot: the Bayes
posterior of a task (solid) and the outputs of a network trained with the
cross-entropy (dashed), over the class densities :math:`P(x \mid c) P(c)`,
whose sum is the input density :math:`P(x)` that weights the loss,

.. math::

    E_{x \sim P(X)} \, KL\bigl(P(C \mid x) \,\|\, q(C \mid x)\bigr)
        = \int P(x) \sum_c P(c \mid x) \log \frac{P(c \mid x)}{q(c \mid x)} \, dx ,

so the fit is good where the shading is high and may be poor where it is not.
The other figures illustrate the side stories: training curves against the
Bayes loss, MSE versus cross-entropy landscapes, log loss versus hinge loss,
the asymmetry of KL, calibration and two-dimensional posterior maps.

The functions live in modules by figure family, and all of them are
available here as ``sn.plotting.<name>``:

=====================  ========================================================
``style``              the conventions: :data:`CLASS_COLORS`, axes handling
``posterior``          :func:`plot_posterior_fit`, :func:`plot_posterior_map`
``calibration``        :func:`plot_oracle`, :func:`plot_reliability_diagram`
``training``           :func:`plot_training_curve`, :func:`plot_convergence`
``objectives``         :func:`plot_loss_landscape`, :func:`plot_margin_losses`,
                       :func:`plot_kl_fits`
=====================  ========================================================

Conventions: each function takes an optional matplotlib ``Axes`` (``ax=None``
makes a new figure) and returns the ``Axes`` it drew on; none calls
``plt.show``.  Colours come from the Okabe-Ito palette, which stays
distinguishable under the common forms of colour blindness; class :math:`c_i`
always has colour ``CLASS_COLORS[i - 1]``.  The numbers behind each picture
(moving averages, loss landscapes, Gaussian fits by KL, calibration bins and
the expected calibration error) are computed by :mod:`scratchnet.metrics`,
which needs no matplotlib, so that tests and notebooks can check them.
"""

from __future__ import annotations

from .calibration import plot_oracle, plot_reliability_diagram
from .objectives import plot_kl_fits, plot_loss_landscape, plot_margin_losses
from .posterior import plot_posterior_fit, plot_posterior_map
from .style import CLASS_COLORS
from .training import plot_convergence, plot_training_curve

__all__ = [
    "CLASS_COLORS",
    "plot_convergence",
    "plot_kl_fits",
    "plot_loss_landscape",
    "plot_margin_losses",
    "plot_oracle",
    "plot_posterior_fit",
    "plot_posterior_map",
    "plot_reliability_diagram",
    "plot_training_curve",
]
