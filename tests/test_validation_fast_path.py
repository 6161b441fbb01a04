"""The fast paths of the input checks decide exactly what the exact checks decide.

``as_float_array`` and ``check_scores`` screen the common case (every entry
finite) with one pass, ``np.vdot(x, x)``, and run the exact checks, which say
where a bad entry is, only when the screen fails; the class-index checks screen
with the smallest and largest target.  Each test here puts the fast path next
to the contract the exact checks implement, written out again in the test
(first NaN, then the first infinity, row-major; targets in range or equal to
``ignore_index``), on inputs built to defeat a screen that is too trusting: a
NaN behind an infinity, ``+inf`` and ``-inf`` together, finite values whose
squares overflow, float32, subclasses, an ``ignore_index`` inside the targets'
range.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import scratchnet as sn
from scratchnet._validation import as_class_indices, as_float_array, screened_finite

NAN, INF = math.nan, math.inf


def _expected_message(x: np.ndarray, name: str, allow_inf: bool) -> str | None:
    """The contract of ``as_float_array``: the first NaN, then the first infinity."""
    for check, text in ((np.isnan, "must not contain NaN; got NaN"),
                        (np.isinf, "must be finite; got ")):
        if check is np.isinf and allow_inf:
            continue
        where = np.argwhere(check(x))
        if len(where):
            index = tuple(int(i) for i in where[0])
            at = f" at index {index}" if len(index) > 1 else f" at index {index[0]}"
            got = "" if check is np.isnan else str(x[index])
            return f"{name} {text}{got}{at}"
    return None


def _big(dtype) -> float:
    """A finite value whose square overflows ``dtype``."""
    return 1e200 if dtype == np.float64 else 1e30


def _bad_arrays(dtype) -> list:
    """Arrays with NaN, infinities and huge values placed to fool a screen."""
    rng = np.random.default_rng(0)
    arrays = []
    for _ in range(60):
        x = rng.normal(size=(int(rng.integers(1, 6)), int(rng.integers(1, 5))))
        values = [NAN, INF, -INF, _big(dtype), 0.0]
        for value in rng.choice(values, size=rng.integers(0, 4)):
            x[tuple(rng.integers(0, s) for s in x.shape)] = value
        arrays.append(x.astype(dtype))
    return arrays


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("allow_inf", [True, False])
def test_as_float_array_refuses_exactly_what_the_contract_refuses(dtype, allow_inf):
    """Same verdict and same message as the contract, NaN first, on 60 arrays."""
    for x in _bad_arrays(dtype):
        expected = _expected_message(x, "x", allow_inf)
        if expected is None:
            out = as_float_array(x, "x", allow_inf=allow_inf)
            assert out is x and out.dtype == dtype  # kept, not copied or converted
        else:
            with pytest.raises(ValueError) as info:
                as_float_array(x, "x", allow_inf=allow_inf)
            assert str(info.value) == expected


def test_a_nan_behind_an_infinity_is_reported_as_nan_with_its_index():
    """inf + nan and inf - inf both defeat a sum; the NaN is still named first."""
    x = np.array([[INF, 1.0], [2.0, NAN], [-INF, 3.0]])
    with pytest.raises(ValueError, match=r"x must not contain NaN; got NaN at index "
                                         r"\(1, 1\)"):
        as_float_array(x, "x", allow_inf=False)
    with pytest.raises(ValueError, match=r"logits must not contain NaN; got NaN at "
                                         r"index \(1, 1\)"):
        sn.cross_entropy(x, [0, 1, 1])


def test_finite_values_whose_squares_overflow_pass_every_check():
    """A screen that fails on overflow must hand over to the exact checks, not refuse."""
    big = np.array([[1e200, -1e200], [1e300, 0.0]])
    assert not screened_finite(big)  # the screen itself cannot tell
    assert as_float_array(big, "x", allow_inf=False) is big
    np.testing.assert_array_equal(sn.softmax(big), [[1.0, 0.0], [1.0, 0.0]])
    x32 = np.array([3e19, 1.0], np.float32)  # its square overflows float32
    assert as_float_array(x32, "x", allow_inf=False) is x32
    q = sn.softmax(x32)
    assert q.dtype == np.float32
    np.testing.assert_array_equal(q, [1.0, 0.0])


def test_the_screen_is_exactly_all_finite_on_plain_float_arrays():
    """np.isfinite(x).all(), where no square overflows; never True for a subclass."""
    for x in _bad_arrays(np.float64) + _bad_arrays(np.float32):
        small = np.where(np.abs(x) == _big(x.dtype), 1, x).astype(x.dtype)
        assert screened_finite(small) == bool(np.isfinite(small).all())
    assert not screened_finite(np.zeros(0))
    assert not screened_finite(np.ma.masked_array([1.0, NAN], mask=[False, True]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scores_with_infinities_get_the_exact_verdicts(dtype):
    """-inf in a row is fine, a row of only -inf and any +inf are not."""
    x = np.array([[0.0, -INF], [1.0, 2.0]], dtype)
    np.testing.assert_array_equal(sn.softmax(x)[0], [1.0, 0.0])
    assert sn.softmax(x).dtype == dtype
    with pytest.raises(ValueError, match="slice along axis 1 where every entry is -inf"):
        sn.softmax(np.array([[0.0, 1.0], [-INF, -INF]], dtype))
    with pytest.raises(ValueError, match=r"must not contain \+inf .*at index \(0, 1\)"):
        sn.softmax(np.array([[0.0, INF], [-INF, -INF]], dtype))
    with pytest.raises(ValueError, match=r"NaN at index \(1, 0\)"):
        sn.softmax(np.array([[0.0, INF], [NAN, -INF]], dtype))
    assert sn.logsumexp(np.array([0.0, INF], dtype)) == INF  # +inf allowed there
    with pytest.raises(ValueError, match=r"NaN at index 2"):
        sn.logsumexp(np.array([INF, 0.0, NAN], dtype))


def _reference_cross_entropy(x, t, ignore_index):
    """Mean cross-entropy over the targets that are not ignore_index, by hand."""
    keep = t != ignore_index
    log_q = x - x.max(axis=1, keepdims=True)
    log_q -= np.log(np.exp(log_q).sum(axis=1, keepdims=True))
    return -log_q[np.flatnonzero(keep), t[keep]].mean()


@pytest.mark.parametrize("ignore_index", [-100, 0, 1, 2, 3, 7])
def test_ignore_index_inside_and_outside_the_targets_range(ignore_index):
    """An ignore_index between the smallest and largest target is still looked for."""
    x = np.random.default_rng(1).normal(size=(6, 4))
    t = np.array([1, 2, 1, 3, 2, 1])
    loss = sn.functional.cross_entropy(x, t, ignore_index=ignore_index)
    assert loss == pytest.approx(_reference_cross_entropy(x, t, ignore_index),
                                 rel=1e-12, abs=0)


def test_targets_out_of_range_are_reported_where_they_are():
    x = np.zeros((4, 3))
    for t, got in (([0, 1, 3, 2], "got 3 at index 2"), ([0, -1, 1, 2], "got -1 at index 1")):
        for call in (sn.cross_entropy, sn.functional.cross_entropy,
                     lambda x, t: as_class_indices(t, 3)):
            with pytest.raises(ValueError, match=got):
                call(x, np.array(t))
    targets = np.array([0, 5, -100], np.int64)  # ignored, but 5 is still out of range
    with pytest.raises(ValueError, match="got 5 at index 1"):
        sn.functional.cross_entropy(np.zeros((3, 3)), targets)
    for unsigned in (np.uint8, np.uint64):  # no negative: the largest decides
        assert sn.cross_entropy(x, np.array([0, 1, 2, 2], unsigned)) == pytest.approx(
            math.log(3), rel=1e-12, abs=0)
        with pytest.raises(ValueError, match="got 3 at index 3"):
            sn.cross_entropy(x, np.array([0, 1, 2, 3], unsigned))


def test_non_finite_gradients_stop_the_step_and_huge_finite_ones_do_not():
    """The optimiser's check: inf or NaN anywhere refused, 1e200 (square overflows) not."""
    for bad, shown in ((INF, "inf"), (NAN, "nan")):
        grad = np.ones((2, 3))
        grad[1, 2] = bad
        params = {"W": np.zeros((2, 3))}
        with pytest.raises(FloatingPointError, match=rf"got {shown} at index \(1, 2\)"):
            sn.SGD(params, lr=0.1).step({"W": grad})
    params = {"W": np.zeros((2, 3))}
    sn.SGD(params, lr=1.0).step({"W": np.full((2, 3), 1e200)})
    np.testing.assert_array_equal(params["W"], -1e200)


def test_subclasses_and_other_dtypes_keep_their_slow_path():
    """A masked array, integers, bools and longdouble are converted as before."""
    masked = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    assert type(as_float_array(masked, "x")) is np.ma.MaskedArray
    assert as_float_array(np.array([1, 2]), "x").dtype == np.float64
    assert as_float_array([True, False], "x").dtype == np.float64
    assert as_float_array(np.ones(2, np.longdouble), "x").dtype == np.longdouble
    swapped = np.ones(2, ">f8")
    assert as_float_array(swapped, "x").dtype == np.dtype("=f8")
    with pytest.raises(TypeError, match="got float16"):
        as_float_array(np.ones(2, np.float16), "x")
