"""STUB: to be written (see the issue for layers)."""

def linear_forward(*args, **kwargs):
    raise NotImplementedError('layers.linear_forward')


def linear_backward(*args, **kwargs):
    raise NotImplementedError('layers.linear_backward')


def relu_forward(*args, **kwargs):
    raise NotImplementedError('layers.relu_forward')


def relu_backward(*args, **kwargs):
    raise NotImplementedError('layers.relu_backward')


def tanh_forward(*args, **kwargs):
    raise NotImplementedError('layers.tanh_forward')


def tanh_backward(*args, **kwargs):
    raise NotImplementedError('layers.tanh_backward')


