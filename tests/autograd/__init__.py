"""Tests of the engine: backward, cr.grad, hooks, the reference engine, gradcheck."""
