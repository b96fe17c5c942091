"""Tests of ONNX export, checked by ONNX Runtime."""
