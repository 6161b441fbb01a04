"""Independent Gaussian helpers shared by test_gaussian.py and test_bayes.py.

Densities written out with the inverse and the determinant, normal CDFs from
math.erf, and a few fixed tasks; nothing here calls the code under test
except to construct the tasks.
"""

import math

import numpy as np

import scratchnet as sn

LOG_2PI = math.log(2 * math.pi)


def normal_cdf(z):
    return 0.5 * (1.0 + np.vectorize(math.erf)(np.asarray(z) / math.sqrt(2.0)))


def log_normal_pdf_1d(x, mu, sd):
    return -0.5 * ((x - mu) / sd) ** 2 - math.log(sd) - 0.5 * LOG_2PI


def log_normal_pdf(x, mu, cov):
    """log N(x; mu, cov) written out with the inverse and the determinant."""
    diff = x - mu
    quad = np.einsum("ni,ij,nj->n", diff, np.linalg.inv(cov), diff)
    return -0.5 * quad - 0.5 * math.log(np.linalg.det(cov)) - 0.5 * len(mu) * LOG_2PI


def two_class_log_joint(x, mu, sd, priors):
    """(n, 2) log P(x, c) for a 1-D two-class task, written out."""
    return np.stack(
        [log_normal_pdf_1d(x, mu[c], sd[c]) + math.log(priors[c]) for c in (0, 1)],
        axis=1,
    )


SEPARATED = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0], name="separated")


def rotation(theta):
    return np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])


def rotated_task(mu, sd, priors, theta=0.7, other_var=1.3):
    """A 2-D task whose classes differ only along a rotated axis: same P(C|x) structure."""
    r = rotation(theta)
    means = np.array([[m, 0.0] for m in mu]) @ r.T
    covs = np.array([r @ np.diag([s**2, other_var]) @ r.T for s in sd])
    return sn.GaussianClasses(means, covariances=covs, priors=priors), r


MULTI_MEANS = np.array([[0.0, 0.0], [2.0, 1.0], [-1.0, 2.5]])
MULTI_COVS = np.array([
    [[1.0, 0.3], [0.3, 0.5]],
    [[2.0, -0.8], [-0.8, 1.0]],
    [[0.7, 0.0], [0.0, 1.5]],
])
MULTI_PRIORS = np.array([0.5, 0.3, 0.2])
