"""Tests of the benchmarks run small, so that they keep working."""
