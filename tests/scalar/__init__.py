"""Tests of the scalar engine, micrograd's API."""
