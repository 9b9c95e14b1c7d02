"""A guess, from one file's model alone, whether the file will have a finding.

It only decides which file a run models again from libcst before any finding is known
(`engine.Refiner.guess`): a wrong guess costs a worker's otherwise idle time, never a
finding, and a finding never depends on it.
"""
from __future__ import annotations

from . import tfapi
from .facts import FileModel

_REPLICA_METHODS = frozenset().union(*tfapi.KERAS_REPLICA_METHODS.values())


def likely_reported(model: FileModel) -> bool:
    """The shape of the commonest finding (TFS201; Keras' own BatchNormalization and
    metrics have it): a class creates a variable on `self` and updates it in a method
    that Keras runs once per replica (`call`, `update_state`, `apply_gradients`...)."""
    created = set()
    for creation in model.creations:
        _, dot, attr = (creation.target or "").partition(".")  # `self.attr`
        if creation.klass and dot and attr.isidentifier():
            created.add((creation.klass, attr))
    if not created:
        return False
    for update in model.updates:
        receiver = update.receiver
        if receiver.kind == "self-attr" and (receiver.qname, receiver.attr) in created \
                and (update.function or "").rpartition(".")[2] in _REPLICA_METHODS:
            return True
    return False
