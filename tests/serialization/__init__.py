"""Tests of save and load, and checkpoints other programs wrote."""
