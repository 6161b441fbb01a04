r"""Units of information: nats, bits, and what a bit of cross-entropy buys.

The quantities of :mod:`scratchnet.information` use the natural log by
default, so their unit is the *nat*; with :math:`\log_2` (``base=2``) it is
the *bit*, and 1 nat :math:`= 1/\ln 2 \approx 1.4427` bits.  A uniform
distribution over 256 values has :math:`\log_2 256 = 8` bits, one byte.

**Bits measure code length.**  For any :math:`q` there is a prefix code that
spends at most :math:`-\log_2 q(y) + 1` bits on symbol :math:`y`, so coding
symbols drawn from :math:`p` with a code built for :math:`q` costs
:math:`H(p, q)` bits per symbol (within one), and :math:`\mathrm{KL}(p \| q)`
is the overhead of believing :math:`q` when the truth is :math:`p`.  A
classifier's cross-entropy loss in bits is thus the average length of the
code its predictions give the labels; by Gibbs' inequality no code is shorter
on average than the one built from :math:`P(C \mid x)`, at
:math:`H(C \mid X)` bits per label.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_float_array, unwrap

__all__ = ["bits_to_nats", "nats_to_bits"]

_LN2 = float(np.log(2.0))  # nats per bit


def nats_to_bits(x: Any) -> Any:
    r"""Convert nats to bits: :math:`x / \ln 2` (1 nat :math:`\approx` 1.4427 bits).

    Parameters
    ----------
    x : array_like
        Information in nats, any shape.

    Returns
    -------
    float or ndarray, same shape
        The same information in bits; float32 stays float32.

    Notes
    -----
    Divides by :math:`\ln 2` exactly as ``base=2`` does:
    ``nats_to_bits(sn.entropy(p)) == sn.entropy(p, base=2)``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> print(f"{sn.nats_to_bits(1.0):.4f}")
    1.4427
    """
    x = as_float_array(x, "x")
    return unwrap(x / x.dtype.type(_LN2))


def bits_to_nats(x: Any) -> Any:
    r"""Convert bits to nats: :math:`x \ln 2` (1 bit :math:`\approx` 0.6931 nats).

    Parameters
    ----------
    x : array_like
        Information in bits, any shape.

    Returns
    -------
    float or ndarray, same shape
        The same information in nats; float32 stays float32.

    Examples
    --------
    >>> import scratchnet as sn
    >>> print(f"{sn.bits_to_nats(8.0):.4f}")  # one byte, in nats
    5.5452
    """
    x = as_float_array(x, "x")
    return unwrap(x * x.dtype.type(_LN2))
