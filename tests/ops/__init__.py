"""Tests of the op catalog against PyTorch, and the rules every op follows."""
