"""STUB: to be written (see the issue for losses)."""

def nll_loss(*args, **kwargs):
    raise NotImplementedError('losses.nll_loss')


def nll_loss_grad(*args, **kwargs):
    raise NotImplementedError('losses.nll_loss_grad')


def cross_entropy(*args, **kwargs):
    raise NotImplementedError('losses.cross_entropy')


def cross_entropy_grad(*args, **kwargs):
    raise NotImplementedError('losses.cross_entropy_grad')


def cross_entropy_and_grad(*args, **kwargs):
    raise NotImplementedError('losses.cross_entropy_and_grad')


def binary_cross_entropy_with_logits(*args, **kwargs):
    raise NotImplementedError('losses.binary_cross_entropy_with_logits')


def binary_cross_entropy_with_logits_grad(*args, **kwargs):
    raise NotImplementedError('losses.binary_cross_entropy_with_logits_grad')


def mse_loss(*args, **kwargs):
    raise NotImplementedError('losses.mse_loss')


def mse_loss_grad(*args, **kwargs):
    raise NotImplementedError('losses.mse_loss_grad')


