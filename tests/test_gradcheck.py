"""gradcheck.py: central differences of functions whose gradients are known."""

import numpy as np
import pytest

import scratchnet as sn

pytestmark = pytest.mark.filterwarnings("error")


def test_numerical_gradient_of_sum_of_cubes():
    x = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(
        sn.numerical_gradient(lambda z: np.sum(z**3), x), 3 * x**2, rtol=1e-9
    )


def test_numerical_gradient_of_a_quadratic_form_in_any_shape():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6))
    x = rng.normal(size=(2, 3))

    def f(z):
        v = z.reshape(-1)
        return v @ a @ v

    expected = ((a + a.T) @ x.reshape(-1)).reshape(2, 3)
    grad = sn.numerical_gradient(f, x)
    assert grad.shape == (2, 3) and grad.dtype == np.float64
    np.testing.assert_allclose(grad, expected, rtol=1e-8, atol=1e-9)


def test_numerical_gradient_of_exp_and_log_terms():
    x = np.array([[0.3, 1.2], [2.0, 0.7]])
    grad = sn.numerical_gradient(lambda z: np.sum(np.exp(z)) + np.log(z[0, 1]), x)
    expected = np.exp(x)
    expected[0, 1] += 1 / x[0, 1]
    np.testing.assert_allclose(grad, expected, rtol=1e-8)


def test_numerical_gradient_does_not_modify_x_and_accepts_float32_and_lists():
    x = np.array([1.0, 2.0], dtype=np.float32)
    before = x.copy()
    grad = sn.numerical_gradient(lambda z: np.sum(z**2), x)
    np.testing.assert_array_equal(x, before)
    assert grad.dtype == np.float64
    np.testing.assert_allclose(grad, [2.0, 4.0], rtol=1e-8)
    np.testing.assert_allclose(
        sn.numerical_gradient(lambda z: z[0] * z[1], [3.0, 5.0]), [5.0, 3.0], rtol=1e-9
    )


def test_numerical_gradient_error_is_second_order_in_eps():
    x = np.array([0.7])
    exact = np.cos(0.7)
    err_big = abs(sn.numerical_gradient(lambda z: np.sin(z[0]), x, eps=1e-2)[0] - exact)
    err_small = abs(sn.numerical_gradient(lambda z: np.sin(z[0]), x, eps=1e-3)[0] - exact)
    assert err_small / err_big == pytest.approx(1e-2, rel=1e-2)


def test_gradient_check_is_tiny_for_a_right_gradient():
    x = np.array([1.0, -2.0, 0.5])
    assert sn.gradient_check(lambda z: np.sum(z**3), lambda z: 3 * z**2, x) < 1e-8
    assert sn.gradient_check(lambda z: np.sum(z**3), 3 * x**2, x) < 1e-8


def test_gradient_check_is_large_for_a_wrong_gradient():
    x = np.array([1.0, -2.0, 0.5])
    f = lambda z: np.sum(z**3)  # noqa: E731
    assert sn.gradient_check(f, -3 * x**2, x) == pytest.approx(1.0)  # wrong sign
    assert sn.gradient_check(f, 1.5 * x**2, x) == pytest.approx(1 / 3)  # factor 2
    wrong_one = 3 * x**2
    wrong_one[2] += 0.1
    assert sn.gradient_check(f, wrong_one, x) > 1e-3


def test_gradient_check_is_finite_for_zero_gradients():
    x = np.zeros(3)
    assert sn.gradient_check(lambda z: np.sum(z**2), np.zeros(3), x) == 0.0
    assert sn.gradient_check(lambda z: 7.0, np.zeros(3), x) == 0.0
    error = sn.gradient_check(lambda z: 7.0, np.ones(3), x)
    assert np.isfinite(error) and error == pytest.approx(1.0)


def test_gradient_check_of_a_loss():
    logits = np.array([[0.2, -1.0, 2.0], [1.5, 0.0, -0.3]])
    targets = np.array([2, 0])
    e = np.exp(logits)
    softmax = e / e.sum(axis=1, keepdims=True)
    analytic = (softmax - np.eye(3)[targets]) / 2  # independent of sn's own grad
    error = sn.gradient_check(lambda z: sn.cross_entropy(z, targets), analytic, logits)
    assert error < 1e-7


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match=r"f must return a scalar.*shape \(2,\)"):
        sn.numerical_gradient(lambda z: z, np.ones(2))
    with pytest.raises(ValueError, match="f must be finite near x"):
        sn.numerical_gradient(lambda z: np.inf if z[0] < 0 else 0.0, np.zeros(1))
    with pytest.raises(ValueError, match=r"eps must be in \(0, inf\); got 0"):
        sn.numerical_gradient(lambda z: 0.0, np.ones(2), eps=0.0)
    with pytest.raises(ValueError, match=r"grad must have the same shape as x \(2,\); got \(3,\)"):
        sn.gradient_check(lambda z: 0.0, np.zeros(3), np.ones(2))
    with pytest.raises(ValueError, match="x must not contain NaN"):
        sn.numerical_gradient(lambda z: 0.0, [np.nan])


def test_return_index_points_at_the_worst_entry():
    x = np.arange(12.0).reshape(3, 4) / 10
    wrong = 2 * x
    wrong[2, 1] += 0.5  # the only wrong entry, relative error 0.5 / (2 * 2.1 + 0.5)
    error, index = sn.gradient_check(lambda z: np.sum(z**2), wrong, x, return_index=True)
    assert index == (2, 1)
    assert error == pytest.approx(0.5 / (2 * 2 * 0.9 + 0.5), rel=1e-6)
    # the plain call still returns the same float
    plain = sn.gradient_check(lambda z: np.sum(z**2), wrong, x)
    assert isinstance(plain, float) and plain == error
    assert sn.gradient_check(lambda z: 0.0, np.zeros(0), np.zeros(0), return_index=True) == (0.0, None)
    assert sn.gradient_check(lambda z: float(z) ** 2, 6.0, 3.0, return_index=True)[1] == ()


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_a_non_finite_analytic_gradient_is_a_clear_error(bad):
    match = "grad must not contain NaN" if np.isnan(bad) else f"grad must be finite; got {bad}"
    with pytest.raises(ValueError, match=match):
        sn.gradient_check(lambda z: np.sum(z), np.array([1.0, bad]), np.ones(2))


@pytest.mark.parametrize("returned", ["0.5", None, b"1", object()])
def test_a_function_that_returns_no_number_is_named(returned):
    with pytest.raises(TypeError, match="f must return a real number; got "):
        sn.numerical_gradient(lambda z: returned, np.ones(2))
