"""Optimizers (SGD, Adam, AdamW, RMSprop, LBFGS) and, in lr_scheduler, learning-rate
schedules."""

from . import lr_scheduler
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "lr_scheduler"]
