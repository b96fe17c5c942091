"""Tests of datasets, samplers and loaders."""
