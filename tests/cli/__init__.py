"""Tests of the command line and its recipes: training, resuming, a run's outputs."""
