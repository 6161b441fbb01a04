"""STUB: to be written (see the issue for mlp)."""

def TwoLayerMLP(*args, **kwargs):
    raise NotImplementedError('mlp.TwoLayerMLP')


def MLP(*args, **kwargs):
    raise NotImplementedError('mlp.MLP')


