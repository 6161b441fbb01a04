"""STUB: to be written (see the issue for information)."""

def entropy(*args, **kwargs):
    raise NotImplementedError('information.entropy')


def cross_entropy(*args, **kwargs):
    raise NotImplementedError('information.cross_entropy')


def kl_divergence(*args, **kwargs):
    raise NotImplementedError('information.kl_divergence')


def gibbs_inequality(*args, **kwargs):
    raise NotImplementedError('information.gibbs_inequality')


def expected_kl(*args, **kwargs):
    raise NotImplementedError('information.expected_kl')


def nats_to_bits(*args, **kwargs):
    raise NotImplementedError('information.nats_to_bits')


def bits_to_nats(*args, **kwargs):
    raise NotImplementedError('information.bits_to_nats')


