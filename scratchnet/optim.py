"""STUB: to be written (see the issue for optim)."""

def SGD(*args, **kwargs):
    raise NotImplementedError('optim.SGD')


def Adam(*args, **kwargs):
    raise NotImplementedError('optim.Adam')


