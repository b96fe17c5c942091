"""Tests of the Tensor's methods, in-place writes, arguments and their errors."""
