"""The answer key and the chapters compute the same thing (issue 39, item 3).

The key (``exercises/key_scores.py``, ``key_models.py``) is the chapters'
formulas in the exercise's own signature, without the argument checks and the
options; the chapters are those formulas behind one validation call.  Here
each keyed function and its chapter run on the same valid inputs (float64 and
float32, large scores included) and agree to rounding.  (The grader compares a
student's function with the chapter's; the key scoring full marks is
``tests/test_exercises.py``.)
"""

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import information, layers, two_gaussians
from scratchnet.exercises import key_models, key_scores

RNG = np.random.default_rng(0)
LOGITS = np.vstack([RNG.normal(scale=3, size=(6, 4)), [[1e3, 1e3 - 5, -1e3, 0.0]]])
TARGETS = np.array([0, 1, 2, 3, 0, 1, 0])
P = RNG.dirichlet(np.ones(4), size=5)
Q = RNG.dirichlet(np.ones(4), size=5)
P[0, 1] = 0.0
P[0] /= P[0].sum()

SCORES = [
    ("logsumexp", (LOGITS,), sn.logsumexp),
    ("softmax", (LOGITS,), sn.softmax),
    ("log_softmax", (LOGITS,), sn.log_softmax),
    ("sigmoid", (LOGITS[:, 0] / 100,), sn.sigmoid),
    ("cross_entropy", (LOGITS, TARGETS), sn.cross_entropy),
    ("cross_entropy_grad", (LOGITS, TARGETS), sn.cross_entropy_grad),
    ("nll_loss", (sn.log_softmax(LOGITS), TARGETS), sn.nll_loss),
    ("entropy", (P,), information.entropy),
    ("kl_divergence", (P, Q), information.kl_divergence),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, args, chapter", SCORES, ids=[s[0] for s in SCORES])
def test_a_score_exercise_s_key_is_its_chapter(name, args, chapter, dtype):
    args = tuple(a.astype(dtype) if a.dtype.kind == "f" else a for a in args)
    key, ours = getattr(key_scores, name)(*args), chapter(*args)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(key, ours, rtol=rtol, atol=rtol * 1e-3)


def test_the_layer_and_model_keys_are_their_chapters():
    x, W, b = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=4)
    dout = RNG.normal(size=(5, 4))
    for fwd, bwd in (("linear_forward", "linear_backward"),):
        out_k, cache_k = getattr(key_models, fwd)(x, W, b)
        out_c, cache_c = getattr(layers, fwd)(x, W, b)
        np.testing.assert_allclose(out_k, out_c, rtol=1e-14)
        for gk, gc in zip(getattr(key_models, bwd)(dout, cache_k),
                          getattr(layers, bwd)(dout, cache_c)):
            np.testing.assert_allclose(gk, gc, rtol=1e-14)
    for fwd, bwd in (("relu_forward", "relu_backward"), ("tanh_forward", "tanh_backward")):
        out_k, cache_k = getattr(key_models, fwd)(x)
        out_c, cache_c = getattr(layers, fwd)(x)
        np.testing.assert_allclose(out_k, out_c, rtol=1e-14)
        np.testing.assert_allclose(getattr(key_models, bwd)(dout[:, :3], cache_k),
                                   getattr(layers, bwd)(dout[:, :3], cache_c), rtol=1e-14)
    xs = np.linspace(-4, 7, 23)
    for params in ((0.0, 1.0, 3.0, 1.0), (0.0, 2.0, 1.0, 1.0), (0.0, 2.0, 3.0, 1.0, 0.3)):
        np.testing.assert_allclose(key_models.two_gaussian_posterior(xs, *params),
                                   two_gaussians.two_gaussian_posterior(xs, *params),
                                   rtol=1e-12, atol=1e-15)


def test_the_model_and_optimiser_keys_train_as_the_chapters():
    task = sn.tasks.separated()
    x, c = task.sample(64, np.random.default_rng(1))
    losses = {}
    for name, (model_cls, opt_cls) in {
        "key": (key_models.TwoLayerMLP, key_models.Adam),
        "chapter": (sn.TwoLayerMLP, sn.Adam),
    }.items():
        model = model_cls(1, 8, 2, rng=0)
        opt = opt_cls(model.params, 0.01)
        step = key_models.train_step if name == "key" else sn.train_step
        losses[name] = [step(model, opt, x, c) for _ in range(20)]
    np.testing.assert_allclose(losses["key"], losses["chapter"], rtol=1e-10)
