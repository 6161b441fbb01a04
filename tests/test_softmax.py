"""softmax.py: reference rows, closed forms, extremes, dtypes, axes and properties."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import scratchnet as sn

pytestmark = pytest.mark.filterwarnings("error")  # no RuntimeWarning, ever

# Softmax rows and their values to 4 significant figures, worked out by hand
# (e.g. softmax(3, 0, 0, 0)_1 = e^3 / (e^3 + 3) = 0.8700).
KNOWN_ROWS = [
    ([-10, -10, 10, -5], [2.061e-09, 2.061e-09, 1.000e00, 3.059e-07]),
    ([3, 0, 0, 0], [8.700e-01, 4.332e-02, 4.332e-02, 4.332e-02]),
    ([1, 2, 3, 4], [3.206e-02, 8.714e-02, 2.369e-01, 6.439e-01]),
]


def _closed_form_softmax(row):
    """exp(x_i) / sum_j exp(x_j), in plain Python floats (moderate inputs only)."""
    e = [math.exp(v) for v in row]
    return [v / math.fsum(e) for v in e]


def _closed_form_log_softmax(row):
    """x_i - max - log1p(sum of the other exp(x_j - max)): accurate near log 1 = 0."""
    top = max(row)
    others = list(row)
    others.remove(top)
    return [v - top - math.log1p(math.fsum(math.exp(u - top) for u in others))
            for v in row]


def _four_significant(values):
    return [float(f"{v:.3e}") for v in values]


finite_rows = arrays(
    np.float64,
    st.tuples(st.integers(1, 5), st.integers(1, 6)),
    elements=st.floats(-1e3, 1e3, allow_nan=False),
)
moderate = arrays(
    np.float64,
    st.integers(1, 20),
    elements=st.floats(-30, 30, allow_nan=False),
)


# ---------------------------------------------------------------- references


@pytest.mark.parametrize("row, expected", KNOWN_ROWS)
def test_softmax_reference_rows_to_four_significant_figures(row, expected):
    assert _four_significant(sn.softmax(np.array(row, float))) == expected


@pytest.mark.parametrize("row", [r for r, _ in KNOWN_ROWS])
def test_softmax_reference_rows_match_the_closed_form(row):
    np.testing.assert_allclose(sn.softmax(row), _closed_form_softmax(row), rtol=1e-14)
    # log(sum) rather than log1p(sum - 1): exact to ~1e-16 absolute, not relative,
    # for the log-probability of a dominant class (as in SciPy and PyTorch).
    np.testing.assert_allclose(
        sn.log_softmax(row), _closed_form_log_softmax(row), rtol=1e-14, atol=1e-16
    )


def test_softmax_of_three_zero_zero_zero_in_closed_form():
    e3 = math.exp(3)
    expected = [e3 / (e3 + 3)] + [1 / (e3 + 3)] * 3
    np.testing.assert_allclose(sn.softmax([3.0, 0, 0, 0]), expected, rtol=1e-15)


def test_softmax_of_a_reference_table_at_once():
    rows = np.array([r for r, _ in KNOWN_ROWS], float)
    expected = [_closed_form_softmax(r) for r, _ in KNOWN_ROWS]
    np.testing.assert_allclose(sn.softmax(rows), expected, rtol=1e-14)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
def test_logsumexp_matches_a_direct_long_double_sum(shape):
    x = np.random.default_rng(0).normal(scale=5, size=shape)
    direct = np.log(np.sum(np.exp(x.astype(np.longdouble)), axis=-1))
    np.testing.assert_allclose(sn.logsumexp(x), direct.astype(float), rtol=1e-14)
    np.testing.assert_allclose(
        sn.logsumexp(x, keepdims=True), direct.astype(float)[..., None], rtol=1e-14
    )


def test_logsumexp_matches_a_direct_float64_sum_on_moderate_input():
    x = np.linspace(-20, 20, 41)
    assert sn.logsumexp(x) == pytest.approx(math.log(math.fsum(np.exp(x))), rel=1e-15)


# ---------------------------------------------------------------- extremes


def test_logsumexp_extremes_without_warnings():
    assert sn.logsumexp([1e300, 1e300]) == 1e300  # + log 2 is below one ulp
    assert sn.logsumexp([-1e300, -1e300]) == -1e300
    assert sn.logsumexp([1e300, -1e300]) == 1e300
    assert sn.logsumexp([0.0, -np.inf]) == 0.0
    assert sn.logsumexp([-np.inf, -np.inf]) == -np.inf
    assert sn.logsumexp([np.inf, 0.0, -np.inf]) == np.inf
    assert sn.logsumexp([1000.0, 1000.0]) == pytest.approx(1000 + math.log(2), rel=1e-15)


def test_softmax_and_log_softmax_extremes_without_warnings():
    np.testing.assert_array_equal(sn.softmax([1e300, -1e300, 0.0]), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(sn.softmax([-1e300, -1e300]), [0.5, 0.5])
    np.testing.assert_array_equal(sn.log_softmax([1e300, 0.0]), [0.0, -1e300])
    np.testing.assert_array_equal(sn.log_softmax([1e4, 0.0]), [0.0, -1e4])
    np.testing.assert_array_equal(sn.softmax([0.0, -np.inf]), [1.0, 0.0])
    np.testing.assert_array_equal(sn.log_softmax([0.0, -np.inf]), [0.0, -np.inf])


def test_sigmoid_and_log_sigmoid_extremes_without_warnings():
    x = np.array([-np.inf, -1e300, -1e4, 0.0, 1e4, 1e300, np.inf])
    np.testing.assert_array_equal(sn.sigmoid(x), [0, 0, 0, 0.5, 1, 1, 1])
    np.testing.assert_array_equal(
        sn.log_sigmoid(x), [-np.inf, -1e300, -1e4, -math.log(2), 0, 0, 0]
    )
    # Tiny probabilities keep full relative precision.
    assert sn.sigmoid(-700.0) == pytest.approx(math.exp(-700), rel=1e-14, abs=0)
    assert sn.log_sigmoid(40.0) == pytest.approx(-math.exp(-40), rel=1e-14, abs=0)


# ---------------------------------------------------------------- dtypes, axes


@pytest.mark.parametrize(
    "func", [sn.softmax, sn.log_softmax, sn.logsumexp, sn.sigmoid, sn.log_sigmoid]
)
def test_float32_stays_float32_and_integers_become_float64(func):
    x = np.array([[1.0, 2.0, -3.0], [0.5, 0.0, 4.0]])
    out32 = func(x.astype(np.float32))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, func(x), rtol=1e-6, atol=1e-6)
    ints = func(np.array([[1, 2, -3], [0, 0, 4]]))
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(ints, func(np.array([[1.0, 2, -3], [0, 0, 4]])))


def test_softmax_axis_zero_is_the_transpose():
    x = np.random.default_rng(1).normal(size=(4, 3))
    np.testing.assert_allclose(sn.softmax(x, axis=0), sn.softmax(x.T).T, rtol=1e-15)
    np.testing.assert_allclose(
        sn.log_softmax(x, axis=0), sn.log_softmax(x.T).T, rtol=1e-15
    )
    np.testing.assert_allclose(sn.logsumexp(x, axis=0), sn.logsumexp(x.T), rtol=1e-15)


@pytest.mark.parametrize("axis", [0, 1, 2, -2])
def test_three_dimensional_input_along_each_axis(axis):
    x = np.random.default_rng(2).normal(size=(2, 3, 4))
    q = sn.softmax(x, axis=axis)
    e = np.exp(x)
    np.testing.assert_allclose(q, e / e.sum(axis=axis, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(
        sn.log_softmax(x, axis=axis), np.log(q), rtol=1e-13, atol=1e-15
    )
    np.testing.assert_allclose(
        sn.logsumexp(x, axis=axis), np.log(e.sum(axis=axis)), rtol=1e-14
    )


@pytest.mark.parametrize("func", [sn.softmax, sn.log_softmax, sn.logsumexp])
def test_bad_axis_is_rejected(func):
    with pytest.raises(ValueError, match=r"axis must be in \[-2, 2\).*got 2"):
        func(np.zeros((2, 3)), axis=2)
    with pytest.raises(TypeError, match="axis must be an integer"):
        func(np.zeros((2, 3)), axis=1.0)


# ---------------------------------------------------------------- properties


@given(finite_rows)
def test_softmax_rows_are_distributions(x):
    q = sn.softmax(x)
    assert np.all(q >= 0) and np.all(q <= 1)
    np.testing.assert_allclose(q.sum(axis=-1), 1.0, rtol=1e-14)


@given(finite_rows, st.floats(-100, 100))
def test_softmax_is_shift_invariant(x, c):
    np.testing.assert_allclose(sn.softmax(x + c), sn.softmax(x), atol=1e-12)
    np.testing.assert_allclose(sn.log_softmax(x + c), sn.log_softmax(x), atol=1e-10)
    np.testing.assert_allclose(sn.logsumexp(x + c), sn.logsumexp(x) + c, atol=1e-10)


@given(finite_rows)
def test_log_softmax_is_log_of_softmax_where_finite(x):
    q = sn.softmax(x)
    normal = q > 1e-300  # log of an underflowed or subnormal q is not informative
    np.testing.assert_allclose(
        sn.log_softmax(x)[normal], np.log(q[normal]), rtol=1e-12, atol=1e-12
    )
    assert np.all(sn.log_softmax(x) <= 0)


@given(moderate)
def test_sigmoid_matches_the_formula_on_moderate_input(x):
    np.testing.assert_allclose(sn.sigmoid(x), 1 / (1 + np.exp(-x)), rtol=1e-14)


@given(moderate)
def test_log_sigmoid_is_log_of_the_formula_on_moderate_input(x):
    np.testing.assert_allclose(
        sn.log_sigmoid(x), np.log(1 / (1 + np.exp(-x))), rtol=1e-13, atol=1e-15
    )


@given(moderate)
def test_sigmoid_is_two_class_softmax(x):
    pairs = np.stack([x, np.zeros_like(x)], axis=-1)
    np.testing.assert_allclose(sn.sigmoid(x), sn.softmax(pairs)[:, 0], rtol=1e-14)
    np.testing.assert_allclose(sn.sigmoid(-x), 1 - sn.sigmoid(x), atol=1e-15)


# ---------------------------------------------------------------- one_hot


def test_one_hot_rows():
    np.testing.assert_array_equal(
        sn.one_hot([0, 2, 1], 3), [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    )
    assert sn.one_hot(np.array([[0, 1], [1, 1]]), 2).shape == (2, 2, 2)
    assert sn.one_hot(np.array([], dtype=int), 4).shape == (0, 4)


def test_one_hot_infers_the_number_of_classes_as_torch():
    np.testing.assert_array_equal(sn.one_hot([2, 0]), np.eye(3)[[2, 0]])
    assert sn.one_hot(np.array([[0], [4]])).shape == (2, 1, 5)
    with pytest.raises(ValueError, match=r"targets is empty.*pass num_classes"):
        sn.one_hot(np.array([], dtype=int))
    with pytest.raises(ValueError, match="targets must be class indices >= 0; got -1"):
        sn.one_hot([0, -1])
    with pytest.raises(TypeError, match="targets must be integer class indices"):
        sn.one_hot([0.0, 1.0])


def test_one_hot_rejects_bad_targets():
    with pytest.raises(ValueError, match=r"targets must be integers in \[0, 3\); got 3"):
        sn.one_hot([0, 3], 3)
    with pytest.raises(ValueError, match=r"targets must be integers in \[0, 3\); got -1"):
        sn.one_hot([-1], 3)
    with pytest.raises(TypeError, match="targets must be integer class indices"):
        sn.one_hot([0.0, 1.0], 3)
    with pytest.raises(ValueError, match="num_classes must be an integer >= 1"):
        sn.one_hot([0], 0)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "func", [sn.softmax, sn.log_softmax, sn.logsumexp, sn.sigmoid, sn.log_sigmoid]
)
def test_nan_is_rejected_with_its_position(func):
    with pytest.raises(ValueError, match=r"x must not contain NaN; got NaN at index 1"):
        func([0.0, np.nan, 1.0])


@pytest.mark.parametrize("func", [sn.softmax, sn.log_softmax])
def test_plus_infinity_is_rejected(func):
    with pytest.raises(ValueError, match=r"x must not contain \+inf.*index \(1, 0\)"):
        func([[0.0, 1.0], [np.inf, 0.0]])


@pytest.mark.parametrize("func", [sn.softmax, sn.log_softmax])
def test_a_row_of_only_minus_infinity_is_rejected(func):
    with pytest.raises(ValueError, match="every entry is -inf"):
        func([[0.0, 1.0], [-np.inf, -np.inf]])


@pytest.mark.parametrize(
    "func", [sn.softmax, sn.log_softmax, sn.logsumexp, sn.sigmoid, sn.log_sigmoid]
)
@pytest.mark.parametrize("bad", [["a", "b"], [1 + 2j, 0j], np.array([None, 1.0])])
def test_non_numeric_input_is_rejected(func, bad):
    with pytest.raises(TypeError, match="x must be an array of real numbers; got dtype"):
        func(bad)


@pytest.mark.parametrize("func", [sn.softmax, sn.log_softmax])
@pytest.mark.parametrize("shape, axis", [((2, 0), 1), ((2, 0), 0), ((0, 3), 1), ((0,), 0)])
def test_an_empty_axis_gives_an_empty_array_of_the_same_shape(func, shape, axis):
    """As torch.softmax / torch.log_softmax: nothing to normalise, nothing returned."""
    for dtype in (np.float64, np.float32):
        out = func(np.zeros(shape, dtype), axis=axis)
        assert out.shape == shape and out.dtype == dtype


def test_logsumexp_of_an_empty_axis_is_minus_infinity():
    """The log of an empty sum, as scipy.special.logsumexp and torch.logsumexp."""
    assert sn.logsumexp([]) == -np.inf
    np.testing.assert_array_equal(sn.logsumexp(np.zeros((3, 0))), [-np.inf] * 3)
    assert sn.logsumexp(np.zeros((3, 0)), keepdims=True).shape == (3, 1)
    assert sn.logsumexp(np.zeros((0, 3))).shape == (0,)


# ------------------------------------------------------------ the dominant term


def test_the_dominant_term_keeps_its_relative_precision():
    """log(1 + e^-40) is 4.248e-18, not the 0 that summing first would give."""
    assert sn.logsumexp([0.0, -40.0]) == pytest.approx(math.log1p(math.exp(-40)),
                                                       rel=1e-15, abs=0)
    assert sn.logsumexp([-40.0, 0.0, -np.inf]) == pytest.approx(4.248354255291589e-18,
                                                                rel=1e-15, abs=0)
    assert sn.log_softmax([0.0, -20.0, -20.0])[0] == pytest.approx(
        -math.log1p(2 * math.exp(-20)), rel=1e-15, abs=0)
    # float32: e^-20 = 2.06e-9 survives as itself, not as 1 + 2e-9 = 1
    got = sn.log_softmax(np.array([20.0, 0.0], np.float32))[0]
    assert got.dtype == np.float32
    assert float(got) == pytest.approx(-math.log1p(math.exp(-20)), rel=1e-6, abs=0)
    # ties: both leaders count, neither is lost
    assert sn.logsumexp([3.0, 3.0, -40.0]) == pytest.approx(
        3 + math.log(2 + math.exp(-43)), rel=1e-15)


def test_log_softmax_is_never_positive():
    x = np.random.default_rng(1).normal(scale=1e-12, size=(200, 3))
    assert (sn.log_softmax(x) <= 0).all()
    assert (sn.log_softmax(np.array([[0.0, -1e-300, -40.0]])) < 0).all()


# ---------------------------------------------------------------- logit


def test_logit_inverts_the_sigmoid_with_relative_precision():
    p = np.array([1e-300, 1e-10, 0.25, 0.3, 0.5 - 1e-12, 0.5, 0.5 + 1e-12, 0.7,
                  0.9, 1 - 1e-12])
    with mpmath.workdps(40):
        expected = [float(mpmath.log(mpmath.mpf(v) / (1 - mpmath.mpf(v)))) for v in p]
    np.testing.assert_allclose(sn.logit(p), expected, rtol=2e-15, atol=0)
    np.testing.assert_allclose(sn.sigmoid(sn.logit(p)), p, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(sn.logit([0.0, 1.0]), [-np.inf, np.inf])
    assert sn.logit(np.float32(0.25)).dtype == np.float32
    assert sn.logit(0.5) == 0.0


@pytest.mark.parametrize("bad, shown", [([0.5, 1.5], "1.5 at index 1"), ([-0.1], "-0.1")])
def test_logit_rejects_what_is_not_a_probability(bad, shown):
    with pytest.raises(ValueError, match=rf"p must be probabilities in \[0, 1\]; got {shown}"):
        sn.logit(bad)
    with pytest.raises(ValueError, match="p must not contain NaN"):
        sn.logit([np.nan])


# ---------------------------------------------------------------- float16


@pytest.mark.parametrize("func", [sn.softmax, sn.log_softmax, sn.logsumexp, sn.sigmoid,
                                  sn.log_sigmoid])
def test_float16_is_rejected_with_the_fix(func):
    with pytest.raises(TypeError, match=r"x must be float32 or float64; got float16.*"
                                        r"x\.astype\(np\.float32\)"):
        func(np.array([1.0, 2.0], np.float16))


@pytest.mark.parametrize("shape", [(40001, 3), (70000, 1), (3, 70000)])
def test_log_softmax_over_many_cache_blocks_matches_a_direct_formula(shape):
    """Large inputs go through several row blocks and a partial last one."""
    x = np.random.default_rng(5).normal(scale=3.0, size=shape)
    expected = x - np.log(np.exp(x).sum(axis=-1, keepdims=True))  # moderate x: safe
    np.testing.assert_allclose(sn.log_softmax(x), expected, rtol=1e-12, atol=1e-12)


def test_what_log_softmax_says_of_its_engine_name_is_true():
    """``sn.log_softmax``'s docstring called ``fast.log_softmax`` a copy working
    in cache-sized blocks with less memory; it is the same function under the
    engine's old name (issue 29)."""
    doc = " ".join(sn.log_softmax.__doc__.split())
    assert "fast.log_softmax` is this function" in doc
    assert "block" not in doc and "less memory" not in doc
    x = np.random.default_rng(0).normal(size=(7, 5))
    np.testing.assert_array_equal(sn.fast.log_softmax(x), sn.log_softmax(x))
