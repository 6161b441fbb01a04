"""STUB: to be written (see the issue for gradcheck)."""

def numerical_gradient(*args, **kwargs):
    raise NotImplementedError('gradcheck.numerical_gradient')


def gradient_check(*args, **kwargs):
    raise NotImplementedError('gradcheck.gradient_check')


