"""Tests of graphs, explanations, the Monitor and TensorBoard."""
