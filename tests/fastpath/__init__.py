"""Tests of the speed tricks and their switch."""
