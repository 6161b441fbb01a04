"""STUB: to be written (see the issue for train)."""

def train(*args, **kwargs):
    raise NotImplementedError('train.train')


def History(*args, **kwargs):
    raise NotImplementedError('train.History')


