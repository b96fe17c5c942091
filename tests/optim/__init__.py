"""Tests of optimizers and learning-rate schedules."""
