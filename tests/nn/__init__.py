"""Tests of modules, layers, losses, initialisation, recurrent and Transformer layers."""
