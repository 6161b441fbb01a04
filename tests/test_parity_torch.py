"""Parity with PyTorch: every function the two libraries share, values and gradients.

float64 throughout, relative tolerance 1e-10.  PyTorch's gradients come from
autograd (``"none"`` is compared as the gradient of the sum, our convention).
The cases follow the shared ones of PyTorch's own suite (the loss reference
functions and sample inputs of ``nn.functional.cross_entropy``, ``nll_loss``,
``binary_cross_entropy_with_logits``, ``mse_loss``, ``multi_margin_loss``):
unbatched, batched and (N, C, d1, d2) layouts; class weights; an
``ignore_index`` that is a real class and the default -100; label smoothing;
probability targets; every reduction.  Written here, not copied.

Runs where PyTorch is installed (``pip install -e ".[parity]"``).
"""

import itertools

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import layers

torch = pytest.importorskip("torch")
F = torch.nn.functional

pytestmark = pytest.mark.filterwarnings("error")

RTOL = 1e-10
C = 5
LAYOUTS = [(C,), (4, C), (3, C, 4), (2, C, 3, 2)]
REDUCTIONS = ["mean", "sum", "none"]
WEIGHT = np.array([0.2, 1.0, 2.5, 0.7, 1.3])


def _t(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _torch(fn, x, *args, reduction, **kwargs):
    """PyTorch's value and gradient w.r.t. ``x`` (of the sum, for "none")."""
    xt = _t(x, grad=True)
    out = fn(xt, *args, reduction=reduction, **kwargs)
    (out.sum() if reduction == "none" else out).backward()
    return out.detach().numpy(), xt.grad.numpy()


def _close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float64), theirs, rtol=RTOL,
                               atol=0)


def _index_targets(layout, seed, ignore=()):
    rng = np.random.default_rng(seed)
    shape = () if len(layout) == 1 else (layout[0], *layout[2:])
    t = rng.integers(0, C, size=shape)
    for index in ignore:  # positions set to -100
        if t.ndim:
            t.flat[index] = -100
    return t


# ---- cross-entropy and nll_loss with class indices ---------------------------------

OPTIONS = {
    "plain": {},
    "weight": {"weight": WEIGHT},
    "ignore a class": {"ignore_index": 1},
    "ignore -100": {"ignore_at": (0, 2)},
    "smoothing": {"label_smoothing": 0.15},
    "weight+smoothing": {"weight": WEIGHT, "label_smoothing": 0.3},
    "weight+ignore": {"weight": WEIGHT, "ignore_at": (1,)},
    "smoothing+ignore": {"label_smoothing": 0.2, "ignore_index": 3},
    "all three": {"weight": WEIGHT, "label_smoothing": 0.4, "ignore_at": (0,)},
}
CE_CASES = list(itertools.product(LAYOUTS, OPTIONS, REDUCTIONS))


def _split(options):
    options = dict(options)
    ignore_at = options.pop("ignore_at", ())
    torch_kwargs = {k: (_t(v) if k == "weight" else v) for k, v in options.items()}
    return options, torch_kwargs, ignore_at


def _check_or_all_ignored(ours, theirs_value):
    """PyTorch gives nan for a mean over no target; we raise, saying why."""
    if np.isnan(theirs_value).all() and np.ndim(theirs_value) == 0:
        with pytest.raises(ValueError, match="every target is ignore_index"):
            ours()
        return None
    return ours()


@pytest.mark.parametrize("layout, option, reduction", CE_CASES,
                         ids=[f"{lay}-{opt}-{red}" for lay, opt, red in CE_CASES])
def test_cross_entropy_matches_torch(layout, option, reduction):
    seed = LAYOUTS.index(layout) * 100 + list(OPTIONS).index(option)
    x = np.random.default_rng(seed).normal(scale=3.0, size=layout)
    ours_kwargs, torch_kwargs, ignore_at = _split(OPTIONS[option])
    t = _index_targets(layout, seed, ignore_at)
    value, grad = _torch(F.cross_entropy, x, torch.tensor(t), reduction=reduction,
                         **torch_kwargs)
    got = _check_or_all_ignored(lambda: sn.functional.cross_entropy_and_grad(
        x, t, reduction=reduction, **ours_kwargs), value)
    if got is None:
        return
    _close(got[0], value)
    _close(got[1], grad)
    assert np.shape(got[0]) == value.shape and got[1].shape == x.shape
    _close(sn.functional.cross_entropy(x, t, reduction=reduction, **ours_kwargs), value)
    _close(sn.functional.cross_entropy_grad(x, t, reduction=reduction, **ours_kwargs), grad)


NLL_OPTIONS = ["plain", "weight", "ignore a class", "ignore -100", "weight+ignore"]
NLL_CASES = list(itertools.product(LAYOUTS, NLL_OPTIONS, REDUCTIONS))


@pytest.mark.parametrize("layout, option, reduction", NLL_CASES,
                         ids=[f"{lay}-{opt}-{red}" for lay, opt, red in NLL_CASES])
def test_nll_loss_matches_torch(layout, option, reduction):
    seed = 7 + LAYOUTS.index(layout) * 100 + NLL_OPTIONS.index(option)
    x = np.random.default_rng(seed).normal(scale=2.0, size=layout)
    log_probs = F.log_softmax(_t(x), dim=0 if len(layout) == 1 else 1).numpy()
    ours_kwargs, torch_kwargs, ignore_at = _split(OPTIONS[option])
    t = _index_targets(layout, seed, ignore_at)
    value, grad = _torch(F.nll_loss, log_probs, torch.tensor(t), reduction=reduction,
                         **torch_kwargs)
    got = _check_or_all_ignored(lambda: sn.functional.nll_loss(log_probs, t, reduction=reduction,
                                                    **ours_kwargs), value)
    if got is None:
        return
    _close(got, value)
    _close(sn.functional.nll_loss_grad(log_probs, t, reduction=reduction, **ours_kwargs), grad)


PROB_CASES = list(itertools.product(LAYOUTS, [None, WEIGHT], [0.0, 0.3], REDUCTIONS))


@pytest.mark.parametrize("layout, weight, smoothing, reduction", PROB_CASES,
                         ids=[f"{c[0]}-w{c[1] is not None}-ls{c[2]}-{c[3]}"
                              for c in PROB_CASES])
def test_cross_entropy_with_probability_targets_matches_torch(layout, weight, smoothing,
                                                              reduction):
    rng = np.random.default_rng(len(layout) + int(10 * smoothing))
    x = rng.normal(scale=2.0, size=layout)
    axis = 0 if len(layout) == 1 else 1
    p = np.moveaxis(rng.dirichlet(np.ones(C), size=np.prod(layout) // C), -1, 0)
    p = np.moveaxis(p.reshape(C, *(s for i, s in enumerate(layout) if i != axis)), 0, axis)
    kwargs = {} if weight is None else {"weight": weight}
    value, grad = _torch(F.cross_entropy, x, _t(p), reduction=reduction,
                         label_smoothing=smoothing,
                         **{k: _t(v) for k, v in kwargs.items()})
    loss, g = sn.functional.cross_entropy_and_grad(x, p, label_smoothing=smoothing,
                                        reduction=reduction, **kwargs)
    _close(loss, value)
    _close(g, grad)


def test_the_reference_value_of_the_brief():
    logits, targets = [[-1.0, -3, 4], [-3, 3, -1]], [0, 1]
    expected = F.cross_entropy(_t(logits), torch.tensor(targets)).item()
    assert round(expected, 4) == 2.5141
    _close(sn.cross_entropy(logits, targets), expected)


# ---- binary cross-entropy, squared error, hinge ------------------------------------

BCE_CASES = list(itertools.product([(6,), (4, 3), (2, 3, 2)], [None, "scalar", "vector"],
                                   REDUCTIONS))


@pytest.mark.parametrize("shape, pos_weight, reduction", BCE_CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in BCE_CASES])
def test_binary_cross_entropy_with_logits_matches_torch(shape, pos_weight, reduction):
    rng = np.random.default_rng(len(shape))
    s = rng.normal(scale=4.0, size=shape)
    y = rng.uniform(size=shape)
    y.flat[0], y.flat[1] = 0.0, 1.0
    pw = {None: None, "scalar": np.array([2.5]),
          "vector": rng.uniform(0.1, 3.0, size=shape[-1])}[pos_weight]
    torch_kwargs = {} if pw is None else {"pos_weight": _t(pw)}
    value, grad = _torch(F.binary_cross_entropy_with_logits, s, _t(y), reduction=reduction,
                         **torch_kwargs)
    kwargs = {} if pw is None else {"pos_weight": pw}
    _close(sn.functional.binary_cross_entropy_with_logits(s, y, reduction=reduction, **kwargs), value)
    _close(sn.functional.binary_cross_entropy_with_logits_grad(s, y, reduction=reduction, **kwargs),
           grad)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(7,), (4, 3), (2, 3, 4)])
def test_mse_loss_matches_torch(shape, reduction):
    rng = np.random.default_rng(sum(shape))
    o, y = rng.normal(size=shape), rng.normal(size=shape)
    value, grad = _torch(F.mse_loss, o, _t(y), reduction=reduction)
    _close(sn.mse_loss(o, y, reduction=reduction), value)
    _close(sn.mse_loss_grad(o, y, reduction=reduction), grad)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_with_class_indices_is_torch_on_one_hot_rows(reduction):
    o = np.random.default_rng(3).normal(size=(6, 4))
    t = np.array([0, 3, 1, 1, 2, 0])
    value, grad = _torch(F.mse_loss, o, F.one_hot(torch.tensor(t), 4).double(),
                         reduction=reduction)
    _close(sn.mse_loss(o, t, reduction=reduction), value)
    _close(sn.mse_loss_grad(o, t, reduction=reduction), grad)


HINGE_CASES = list(itertools.product([1.0, 0.5, 2.0], [None, WEIGHT], REDUCTIONS))


@pytest.mark.parametrize("margin, weight, reduction", HINGE_CASES,
                         ids=[f"m{c[0]}-w{c[1] is not None}-{c[2]}" for c in HINGE_CASES])
def test_multi_margin_loss_matches_torch(margin, weight, reduction):
    rng = np.random.default_rng(int(margin * 10))
    x, t = rng.normal(size=(8, C)), rng.integers(0, C, size=8)
    kwargs = {} if weight is None else {"weight": weight}
    value, grad = _torch(F.multi_margin_loss, x, torch.tensor(t), margin=margin,
                         reduction=reduction, **{k: _t(v) for k, v in kwargs.items()})
    _close(sn.multi_margin_loss(x, t, margin=margin, reduction=reduction, **kwargs), value)
    _close(sn.multi_margin_loss_grad(x, t, margin=margin, reduction=reduction, **kwargs),
           grad)


# ---- scores to probabilities, and the layer pairs ----------------------------------

ARRAYS = {
    "row": np.array([-1.0, -3, 4, 0.5]),
    "batch": np.random.default_rng(0).normal(scale=5.0, size=(6, 4)),
    "3-d": np.random.default_rng(1).normal(scale=3.0, size=(2, 3, 5)),
    "large": np.array([[1000.0, 999.0, -1000.0], [-1e4, 0.0, 1e4]]),
    "-inf": np.array([[0.0, -np.inf, 2.0], [-np.inf, 1.0, 1.0]]),
}


@pytest.mark.parametrize("name", ARRAYS)
@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_log_softmax_logsumexp_match_torch_with_gradients(name, axis):
    x = ARRAYS[name]
    dout = np.random.default_rng(2).normal(size=x.shape)
    for ours_forward, ours_backward, theirs in (
            (layers.softmax_forward, layers.softmax_backward, torch.softmax),
            (layers.log_softmax_forward, layers.log_softmax_backward, torch.log_softmax)):
        if name == "-inf" and axis == 0 and theirs is torch.softmax:
            pass  # every column has a finite entry: fine for both
        xt = _t(x, grad=True)
        out = theirs(xt, dim=axis)
        finite = torch.isfinite(out)
        (out[finite] * _t(dout)[finite]).sum().backward()
        got, cache = ours_forward(x, axis=axis)
        np.testing.assert_allclose(got, out.detach().numpy(), rtol=RTOL, atol=0)
        dx = ours_backward(np.where(np.isfinite(got), dout, 0.0), cache)
        np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=RTOL, atol=1e-300)
    _close(sn.logsumexp(x, axis=axis), torch.logsumexp(_t(x), dim=axis).numpy())


def test_sigmoid_log_sigmoid_logit_match_torch():
    x = np.concatenate([np.linspace(-700, 700, 141), [-30.0, -1e-3, 0.0, 1e-3, 30.0]])
    _close(sn.sigmoid(x), torch.sigmoid(_t(x)).numpy())
    _close(sn.log_sigmoid(x), F.logsigmoid(_t(x)).numpy())
    p = np.concatenate([np.linspace(0.01, 0.99, 99), [1e-300, 1e-10, 1 - 1e-10]])
    _close(sn.logit(p), torch.logit(_t(p)).numpy())


def test_one_hot_matches_torch_including_the_inferred_count():
    t = np.array([[0, 4], [2, 1]])
    np.testing.assert_array_equal(sn.one_hot(t), F.one_hot(torch.tensor(t)).numpy())
    np.testing.assert_array_equal(sn.one_hot(t, 7), F.one_hot(torch.tensor(t), 7).numpy())


@pytest.mark.parametrize("name", ["relu", "tanh"])
def test_elementwise_layer_pairs_match_torch_autograd(name):
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0, 30.0])
    dout = np.array([1.0, -2.0, 3.0, np.nan, 0.5, 2.0])
    dout[3] = 1.5
    xt = _t(x, grad=True)
    out = getattr(torch, name)(xt)
    (out * _t(dout)).sum().backward()
    got, cache = getattr(layers, f"{name}_forward")(x)
    _close(got, out.detach().numpy())
    _close(getattr(layers, f"{name}_backward")(dout, cache), xt.grad.numpy())


def test_relu_backward_nan_upstream_matches_torch_threshold_backward():
    x = np.array([-1.0, 0.0, 2.0])
    xt = _t(x, grad=True)
    torch.relu(xt).backward(_t([np.nan, np.nan, np.nan]))
    _, cache = layers.relu_forward(x)
    np.testing.assert_array_equal(layers.relu_backward([np.nan] * 3, cache),
                                  xt.grad.numpy())


def test_linear_pair_matches_torch_autograd():
    rng = np.random.default_rng(4)
    x, W, b, dout = (rng.normal(size=s) for s in [(5, 3), (3, 2), (2,), (5, 2)])
    xt, Wt, bt = _t(x, True), _t(W, True), _t(b, True)
    ((xt @ Wt + bt) * _t(dout)).sum().backward()
    out, cache = layers.linear_forward(x, W, b)
    _close(out, (xt @ Wt + bt).detach().numpy())
    for got, want in zip(layers.linear_backward(dout, cache), (xt.grad, Wt.grad, bt.grad)):
        _close(got, want.numpy())


def test_kl_divergence_is_torch_kl_div_in_the_order_of_the_notation():
    rng = np.random.default_rng(5)
    p, q = rng.dirichlet(np.ones(C), size=4), rng.dirichlet(np.ones(C), size=4)
    theirs = F.kl_div(_t(np.log(q)), _t(p), reduction="none").sum(dim=1).numpy()
    _close(sn.kl_divergence(p, q), theirs)
    _close(sn.kl_divergence(p, log_q=np.log(q)), theirs)


def test_the_original_recipe_is_the_pytorch_loop_given_the_same_draws():
    """The ``original`` recipe, seed for seed, against the PyTorch transcription of
    the original training loop (``benchmarks/original_torch.py``) started from the
    same draws (its ``draws="scratchnet"``: scratchnet's initial weights, sample
    and batch order for the seed): the same network, batches, loss and Adam give
    the same max |q - P| at every snapshot, within float32 rounding (measured to
    200 steps: at most 1.2e-7 over 36 networks; later, rounding differences
    grow and the runs drift apart, while their distributions over seeds stay
    alike)."""
    original_torch = _original_torch()
    for task, seed in (("separated", 3), ("sparse-tail", 5)):
        theirs = original_torch.run(task, seed, steps=200, draws="scratchnet")
        ours = {row["step"]: row["max_abs_error"]
                for row in sn.experiments.run(task, "original", seed=seed,
                                              steps=200).rows}
        assert set(theirs) <= set(ours) and len(theirs) == 5
        for step, error in theirs.items():
            assert abs(ours[step] - error) <= 2e-6, (task, step, ours[step], error)


def test_the_study_loop_transcription_sees_the_same_batches():
    """``batching="study"`` (the study's item-by-item dataset, collated by a
    DataLoader, with its per-step ``loss.item()`` and snapshot test pass) and
    ``"dataloader"`` feed the loop the very batches that slicing does, given
    the same orders: the same errors to the last bit.  A cheap reference is
    only a fair yardstick for the study's time if it trains the same way."""
    original_torch = _original_torch()
    runs = [original_torch.run("unequal-variance", 2, steps=50, draws="scratchnet",
                               batching=batching) for batching in original_torch.BATCHINGS]
    assert len(runs[0]) == 3 and runs[1] == runs[0] and runs[2] == runs[0]


def _original_torch():
    """``benchmarks/original_torch.py`` as a module, PyTorch on one thread."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "original_torch.py"
    spec = importlib.util.spec_from_file_location("original_torch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.set_num_threads(1)
    return module
