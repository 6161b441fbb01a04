"""STUB: to be written (see the issue for tasks)."""

def separated(*args, **kwargs):
    raise NotImplementedError('tasks.separated')


def unequal_variance(*args, **kwargs):
    raise NotImplementedError('tasks.unequal_variance')


def sparse_tail(*args, **kwargs):
    raise NotImplementedError('tasks.sparse_tail')


TASKS = {}
