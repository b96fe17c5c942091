"""Tests of ordinary PyTorch programs run with torch aliased to chainrule."""
