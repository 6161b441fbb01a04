"""A correct minimal NumPy submission of every exercise, written by hand (not the answer key).

Used by tests/test_exercises*.py: it must score full marks, and each classic
mistake is planted in it alone.  Only NumPy and the covered arguments: no
validation, no error messages, no options.
"""

from pathlib import Path

MODULES = {
    "__init__": '"""A student\'s homework."""\n',
    "softmax": '''
import numpy as np


def logsumexp(x):
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0]


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(x):
    return x - logsumexp(x)[..., None]
''',
    "losses": '''
import numpy as np

from .softmax import log_softmax, softmax


def nll_loss(log_probs, targets):
    return -log_probs[np.arange(len(targets)), targets].mean()


def cross_entropy(logits, targets):
    return nll_loss(log_softmax(logits), targets)


def cross_entropy_grad(logits, targets):
    n = len(targets)
    grad = softmax(logits)
    grad[np.arange(n), targets] -= 1
    return grad / n
''',
    "information": '''
import numpy as np


def entropy(p):
    return -np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0).sum(axis=-1)


def kl_divergence(p, q):
    with np.errstate(divide="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / q), 0)
    return terms.sum(axis=-1)
''',
    "two_gaussians": '''
import numpy as np


def two_gaussian_posterior(x, mu1, sigma1, mu2, sigma2, prior1=0.5):
    log1 = np.log(prior1) - np.log(sigma1) - 0.5 * ((x - mu1) / sigma1) ** 2
    log2 = np.log(1 - prior1) - np.log(sigma2) - 0.5 * ((x - mu2) / sigma2) ** 2
    return 1 / (1 + np.exp(log2 - log1))
''',
    "layers": '''
import numpy as np


def linear_backward(dout, cache):
    x, W = cache
    return dout @ W.T, x.T @ dout, dout.sum(axis=0)


def relu_backward(dout, cache):
    return dout * (cache > 0)


def tanh_backward(dout, cache):
    return dout * (1 - cache ** 2)
''',
    "mlp": '''
import numpy as np
from scratchnet.mlp import TwoLayerMLP as Base

from .layers import linear_backward, relu_backward, tanh_backward


class TwoLayerMLP(Base):
    def forward(self, x):
        x = np.asarray(x).reshape(len(x), -1)
        P = self.params
        z = x @ P["W1"] + P["b1"]
        h = np.maximum(z, 0) if self.activation == "relu" else np.tanh(z)
        self.saved = (x, z, h)
        return h @ P["W2"] + P["b2"]

    def backward(self, dlogits):
        x, z, h = self.saved
        P = self.params
        dh, dW2, db2 = linear_backward(dlogits, (h, P["W2"]))
        if self.activation == "relu":
            dz = relu_backward(dh, z)
        else:
            dz = tanh_backward(dh, h)
        _, dW1, db1 = linear_backward(dz, (x, P["W1"]))
        return {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}
''',
    "optim": '''
import numpy as np
from scratchnet.optim import SGD as BaseSGD, Adam as BaseAdam


class SGD(BaseSGD):
    def update(self, param, grad, state):
        param -= self.lr * grad


class Adam(BaseAdam):
    def update(self, param, grad, state):
        b1, b2 = self.betas
        t = self.steps
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m[...] = b1 * m + (1 - b1) * grad
        v[...] = b2 * v + (1 - b2) * grad ** 2
        m_hat = m / (1 - b1 ** t)
        v_hat = v / (1 - b2 ** t)
        param -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
''',
    "train": '''
def train_step(model, optimizer, x, targets):
    loss, grads = model.loss_and_grads(x, targets)
    optimizer.step(grads)
    return float(loss)
''',
}


def write(directory, replace=None):
    """Write the submission into ``directory``; ``replace`` maps a module to
    ``(old, new)`` text substitutions (a planted mistake)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in MODULES.items():
        for old, new in (replace or {}).get(name, []):
            assert old in text, (name, old)
            text = text.replace(old, new)
        (directory / f"{name}.py").write_text(text.lstrip())
    return directory


def in_groups(cases, related):
    """``cases`` gathered into as few groups as hold them apart, for one grading each.

    ``related(case)`` names the exercises a case grades and those its planted
    code calls.  Within a group no exercise is named by two cases, and none
    uses (at any depth) one that another case names, so each exercise is
    graded as with its own mistake alone: in a child of its own, with no
    carry-forward from another case's exercise.
    """
    from scratchnet.exercises.catalogue import select
    from scratchnet.exercises.grading import dependencies

    def reach(ids):
        return {*ids, *(d for i in ids for d in dependencies(select([i])[0]))}

    groups = []
    for case in cases:
        mine = set(related(case))
        for group in groups:
            theirs = {i for other in group for i in related(other)}
            if not (reach(mine) & theirs or mine & reach(theirs)):
                group.append(case)
                break
        else:
            groups.append([case])
    return groups


def merged(replacements):
    """The ``replace`` argument of :func:`write` for several planted mistakes."""
    out = {}
    for replace in replacements:
        for module, pairs in replace.items():
            out.setdefault(module, []).extend(pairs)
    return out
