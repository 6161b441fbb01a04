"""Tests for scratchnet.units: nats and bits.

Checked against ``math.log(2)`` directly and against the ``base=2`` of
``scratchnet.information``, which must divide by the very same number.
"""

import math

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import units

LN2 = math.log(2.0)


def test_one_nat_is_one_over_ln2_bits():
    assert sn.nats_to_bits(1.0) == pytest.approx(1 / LN2, rel=1e-15)
    assert sn.nats_to_bits(1.0) == pytest.approx(1.4427, abs=5e-5)
    assert sn.bits_to_nats(1.0) == pytest.approx(LN2, rel=1e-15)
    x = np.array([0.0, 0.3, 2.5, np.inf])
    np.testing.assert_allclose(sn.bits_to_nats(sn.nats_to_bits(x)), x, rtol=1e-15)


def test_one_byte_in_nats():
    assert sn.bits_to_nats(8.0) == pytest.approx(8 * LN2, rel=1e-15)
    assert sn.nats_to_bits(sn.bits_to_nats(8.0)) == pytest.approx(8.0, rel=1e-15)


@pytest.mark.parametrize("p", [[0.25, 0.75], [0.1, 0.2, 0.7], np.full(256, 1 / 256)])
def test_conversion_divides_by_the_same_ln2_as_base_2(p):
    assert sn.nats_to_bits(sn.entropy(p)) == sn.entropy(p, base=2)


def test_shapes_scalars_and_float32_are_preserved():
    p = np.array([[0.25, 0.75], [0.5, 0.5]], dtype=np.float32)
    assert sn.nats_to_bits(np.float32(1.0)).dtype == np.float32
    assert sn.bits_to_nats(p).dtype == np.float32
    assert sn.bits_to_nats(p).shape == (2, 2)
    assert np.ndim(sn.nats_to_bits(1.0)) == 0
    assert sn.nats_to_bits([1, 2]).dtype == np.float64  # integers become float64


def test_the_functions_live_in_units():
    assert sn.nats_to_bits is units.nats_to_bits
    assert sn.bits_to_nats is units.bits_to_nats
    assert units.__all__ == ["bits_to_nats", "nats_to_bits"]


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: sn.nats_to_bits([1.0, np.nan]), ValueError, r"x must not contain NaN"),
        (lambda: sn.bits_to_nats([np.nan]), ValueError, r"x must not contain NaN"),
        (lambda: sn.nats_to_bits(["a"]), TypeError, r"x must be an array of real numbers"),
        (lambda: sn.bits_to_nats(1 + 2j), TypeError, r"x must be an array of real numbers"),
    ],
)
def test_bad_input_gives_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()
