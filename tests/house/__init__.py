"""Tests of the code's layout, the package as installed, the tutorial."""
