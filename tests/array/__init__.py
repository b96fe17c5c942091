"""Tests of the array layer: the CUDA stand-in, devices side by side, random draws."""
